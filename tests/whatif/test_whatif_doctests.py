"""The examples in the what-if modules' docstrings run and stay true."""

import doctest

import pytest

from twin.whatif import bom, performance, plots, report, rules, stages, structure


@pytest.mark.parametrize(
    "module", [bom, performance, plots, report, rules, stages, structure], ids=lambda module: module.__name__
)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
