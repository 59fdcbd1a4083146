"""The examples in the core's docstrings run and stay true."""

import doctest

import pytest

from twin.simcore import errors, generate, hops, layout, model, simulate, transport, units


@pytest.mark.parametrize(
    "module", [errors, model, generate, hops, layout, simulate, transport, units], ids=lambda module: module.__name__
)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
