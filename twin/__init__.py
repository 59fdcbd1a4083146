"""The super-node fabric twin: Django project package.

The Celery app is exposed here so that `celery -A twin worker` finds it and so that
`@shared_task` functions bind to it when Django starts.
"""
from numpy._core.multiarray import _set_madvise_hugepage

from .celery import app as celery_app

# numpy asks the kernel for transparent huge pages for every large array; where the kernel then
# compacts memory to find them (THP defrag "madvise", the default of many distributions) the
# allocation stalls in the kernel. Measured on our 2-core VM: the 1,024-card direct all-to-all
# 3.6-7.7 s with them, 2.7-2.9 s without; 65,536-card placement 7.9-9.2 s against 6.7-7.5 s.
# The setting is numpy's own (what NUMPY_MADVISE_HUGEPAGE=0 does at import), applied whatever
# imported numpy first.
_set_madvise_hugepage(False)

__all__ = ("celery_app",)
