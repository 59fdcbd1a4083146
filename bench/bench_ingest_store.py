"""Benchmark: storing and loading a 16,384-card, 3-tier fat-tree snapshot in the real database.

Run from the repository root against PostgreSQL (the target database is created and dropped):
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python bench/bench_ingest_store.py
Without DATABASE_URL it uses a temporary SQLite file. Prints figures; asserts nothing.

Stages timed: parse (canonical JSON text of the fabric), store (snapshot_create: one transaction,
bulk inserts), load (snapshot_spec_get, the ORM -> core adapter) and diff of two stored snapshots
(loads both, then diff_fabrics). Baseline for store: saving the same rows one by one with
Model.save() on a 1,024-card fabric, scaled per row.
"""
import contextlib
import os
import resource
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import timed  # noqa: E402
from tests.stack import scratch_database  # noqa: E402


def main() -> None:
    scratch = contextlib.ExitStack()
    database_url = scratch.enter_context(scratch_database(Path(tempfile.mkdtemp()), "twin_bench"))
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
    os.environ.setdefault("TWIN_DATA_DIR", tempfile.mkdtemp())
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction

    from twin.fabrics.models import Link, Node, Snapshot
    from twin.fabrics.selectors import snapshot_spec_get
    from twin.fabrics.services import snapshot_create
    from twin.ingest import export_canonical, parse_fabric
    from twin.simcore.diff import diff_fabrics
    from twin.simcore.generate import fat_tree

    try:
        call_command("migrate", verbosity=0)
        print(f"database: {connection.vendor} ({connection.settings_dict['NAME']})")
        spec = fat_tree(endpoints=16384, radix=64, name="bench")
        print(f"fabric: {len(spec.cards())} cards, {len(spec.switches())} switches, {len(spec.links)} links\n")
        text = export_canonical(spec)
        parsed, _ = timed("parse canonical JSON (%.0f MB)" % (len(text) / 1e6), lambda: parse_fabric(text, source_name="bench.json"))
        store = lambda: snapshot_create(fabric_name="bench", spec=parsed, source_name="bench.json", source_format="twin-fabric", checksum="0" * 64)  # noqa: E731
        first, store_s = timed("store snapshot (target < 10 s)", store)
        second, _ = timed("store a second snapshot", store)
        loaded, _ = timed("load snapshot back as FabricSpec", lambda: snapshot_spec_get(snapshot_id=first.pk))
        assert loaded == parsed, "the stored snapshot does not read back equal"
        timed("diff two stored snapshots (load both + diff)", lambda: diff_fabrics(snapshot_spec_get(snapshot_id=first.pk), snapshot_spec_get(snapshot_id=second.pk)))

        # Baseline: one INSERT per row with Model.save(), on a smaller fabric, scaled per row.
        small = fat_tree(endpoints=1024, radix=64, name="baseline")
        rows = len(small.nodes) + len(small.links)

        def row_by_row() -> None:
            with transaction.atomic():
                snapshot = Snapshot.objects.create(fabric=first.fabric, version=99, source_name="b", source_format="b", checksum="0")
                pks = {}
                for node in small.nodes:
                    row = Node(snapshot=snapshot, key=node.id, kind=node.kind, name=node.name, tier=node.tier, radix=node.radix, host=node.host)
                    row.save()
                    pks[node.id] = row.pk
                for link in small.links:
                    Link(snapshot=snapshot, a_id=pks[link.a], a_port=link.a_port, b_id=pks[link.b], b_port=link.b_port,
                         bandwidth_gbps=link.bandwidth_gbps, latency_ns=link.latency_ns, state=link.state, domain=link.domain).save()

        _, baseline_s = timed(f"baseline: row-by-row save of {rows:,} rows", row_by_row)
        big_rows = len(spec.nodes) + len(spec.links)
        print(f"\nstore speed: {big_rows / store_s:,.0f} rows/s vs baseline {rows / baseline_s:,.0f} rows/s "
              f"({(big_rows / store_s) / (rows / baseline_s):.1f}x)")
        print(f"peak memory (ru_maxrss): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
    finally:
        connection.close()
        scratch.close()


if __name__ == "__main__":
    main()
