"""Operations on a fabric snapshot: job placement, failure what-ifs and diagnosis.

Pure code (numpy, scipy, networkx and the simulation core): the web layer
calls these functions and stores their JSON-ready results. docs/operations.md
describes every entry point and result shape.

- ``placement``: place a TP x PP x DP (x EP) job on the free cards, evaluate it.
- ``failures``: take links or switches down, search the worst single failure.
- ``diagnosis``: the troubleshooting table's rules, bottom-up.
- ``concurrent``: the shared evaluator of many groups running one collective at once.
"""

__all__: list[str] = []
