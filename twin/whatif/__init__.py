"""Staged scale-out what-if: grow a fabric 2x, 4x, 8x ... by its own design rules and report.

Pure core (plain Python, numpy, scipy, networkx, matplotlib; no web layer), so
that each Celery task of a what-if run is one call here on plain data. Import
from the modules:

- ``twin.whatif.rules``: ``design_rules(spec)`` -> ``DesignRules`` (inferred, overridable).
- ``twin.whatif.stages``: ``plan_stages(rules, ...)`` -> ``StageSpec`` list, ``build_stage``.
- ``twin.whatif.bom``: ``bill_of_materials``, ``bom_delta``, ``ItemParams``.
- ``twin.whatif.structure``: ``structure`` (tiers, hops, bisection, fault domain).
- ``twin.whatif.performance``: ``performance_cell``, ``training_step_cell``.
- ``twin.whatif.report``: ``assemble_report`` (efficiency, knee, alternatives),
  ``compare_reports``, ``report_summary``.
- ``twin.whatif.render``: ``render_html``, ``render_pdf``, ``render_csv``,
  ``report_json``, ``render_comparison_html``.
- ``twin.whatif.errors``: ``WhatIfError``.

The workflow and every definition are in docs/whatif.md.
"""

__all__: list[str] = []
