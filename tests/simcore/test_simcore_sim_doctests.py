"""The examples in the simulation modules' docstrings run and stay true."""

import doctest

import pytest

from twin.simcore import congestion, simulate, transport


@pytest.mark.parametrize("module", [congestion, simulate, transport], ids=lambda module: module.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
