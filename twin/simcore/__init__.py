"""Pure simulation core of the twin: plain data in, plain data out.

Nothing here imports Django, Celery, Channels or another ``twin`` app, so the
benchmarks and most tests run without a database. Import from the modules:

- ``twin.simcore.model``: frozen dataclasses describing a fabric (``FabricSpec``).
- ``twin.simcore.generate``: design-rule generators (``supernode``, ``fat_tree``,
  ``rail_optimised``, ``supernode_cluster``).
- ``twin.simcore.hops``: hop-distance matrix and statistics between cards.
- ``twin.simcore.simulate``: collectives on a fabric (``Simulator``, ``simulate``),
  built on ``transport``, ``compile``, ``congestion`` and ``algorithms``.
- ``twin.simcore.calibrate``: fit transport parameters to measured nccl-tests curves.
- ``twin.simcore.errors``: the exception tree (``TwinCoreError`` > ``FabricError``).
"""

__all__: list[str] = []
