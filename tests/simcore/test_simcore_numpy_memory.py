"""numpy's large arrays are not madvised into huge pages once the twin is imported (twin/__init__.py)."""
from numpy._core.multiarray import _set_madvise_hugepage

import twin  # noqa: F401  - the package applies the setting when imported


def test_numpy_does_not_ask_for_huge_pages():
    was_on = _set_madvise_hugepage(False)  # returns the setting it replaces
    assert was_on is False
