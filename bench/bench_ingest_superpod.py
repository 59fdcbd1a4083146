"""Benchmark: uploading a DGX H100 SuperPOD as its operators would, dump plus per-host XMLs.

Run from the repository root (the target database is created and dropped; without
DATABASE_URL a temporary SQLite file):
    .venv/bin/python bench/bench_ingest_superpod.py            # 64 units: 16,384 GPUs, 2,048 XMLs
    .venv/bin/python bench/bench_ingest_superpod.py --units 8  # a quicker look
Prints figures; asserts only that the result has the cards it must have.

The files come from twin.ingest.writers.superpod: one ibnetdiscover dump (HCAs named
"<host> HCA-N", SHARP engines, storage and UFM HCAs on the ports of 2 hosts out for service,
one host with default descriptions) and one NCCL topology XML per host in the dump, packed in
one hosts.tar.gz as ops collect them. Timed: the whole upload path (unpack the archive, then
snapshot_import: decode, parse every file, merge, complete, store in one transaction), with its
parts timed separately in the pure core. Target (issue 12): ingest
and merge < 30 s and < 2 GB at 16,384 GPUs.
"""
import argparse
import contextlib
import io
import os
import resource
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.measure import timed  # noqa: E402
from tests.stack import scratch_database  # noqa: E402


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--units", type=int, default=64, help="scalable units of 32 DGX (default 64: 16,384 GPUs)")
    options.add_argument("--whatif", action="store_true", help="then grow the stored snapshot 2x and 4x (rail design, allreduce at 1 GiB), cells run one after another")
    arguments = options.parse_args()
    units, whatif = arguments.units, arguments.whatif

    scratch = contextlib.ExitStack()
    os.environ["DATABASE_URL"] = scratch.enter_context(scratch_database(Path(tempfile.mkdtemp()), "twin_bench"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")
    os.environ.setdefault("TWIN_DATA_DIR", tempfile.mkdtemp())
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from twin.fabrics.services import SourceFile, snapshot_import
    from twin.ingest import detect_format, parse_fabric
    from twin.ingest.completion import complete_fabric
    from twin.ingest.merge import merge_fabrics
    from twin.ingest.writers.superpod import superpod_files

    try:
        call_command("migrate", verbosity=0)
        servers = units * 32
        files, _ = timed(f"write the files ({servers:,} DGX, {servers * 8:,} GPUs)", lambda: superpod_files(
            units=units, missing={servers // 2, servers}, nameless={3}, storage_hosts=2,
        ))
        size = sum(len(text) for text in files.values())
        print(f"database: {connection.vendor}; {len(files):,} files, {size / 1e6:,.1f} MB\n")

        parts, parse_s = timed("parse every file", lambda: [
            (name, parse_fabric(text, source_name=name, format=detect_format(text))) for name, text in files.items()
        ])
        merged, merge_s = timed("merge the dump with the per-host XMLs", lambda: merge_fabrics(parts, name="superpod"))
        formats = {name: detect_format(text) for name, text in files.items()}
        done, complete_s = timed("complete (cards, scale-up, SHARP, warnings)", lambda: complete_fabric(merged, formats=formats))
        print(f"{'parse + merge + complete (pure core)':<58} {parse_s + merge_s + complete_s:8.2f} s\n")

        packed = io.BytesIO()
        with tarfile.open(fileobj=packed, mode="w:gz") as archive:
            for name, text in files.items():
                if name.endswith(".xml"):
                    data = text.encode()
                    member = tarfile.TarInfo(f"topo/{name}")
                    member.size = len(data)
                    archive.addfile(member, io.BytesIO(data))
        uploads = [
            SourceFile(name="superpod.ibnetdiscover", data=files["superpod.ibnetdiscover"].encode()),
            SourceFile(name="hosts.tar.gz", data=packed.getvalue()),
        ]
        print(f"upload: the dump and hosts.tar.gz ({len(packed.getvalue()) / 1e3:,.0f} kB, {len(files) - 1:,} XMLs)")
        snapshot, upload_s = timed("unpack + snapshot_import: the whole upload, stored (target < 30 s)", lambda: snapshot_import(
            fabric_name="superpod", files=uploads,
        ))
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory (ru_maxrss, target < 2,048 MiB): {peak:,.0f} MiB")
        cards = snapshot.summary["completion"]["cards"]
        print(f"\nstored: {snapshot.card_count:,} cards ({cards['sources']}), {snapshot.switch_count:,} switches, "
              f"{snapshot.link_count:,} links; {cards['non_compute_hcas']} non-compute HCAs left out; "
              f"{snapshot.summary['completion']['in_switch_reduction']['switches']:,} switches reduce in-network; "
              f"warnings: {snapshot.summary['warnings'] or 'none'}")
        assert snapshot.card_count == (servers - 2) * 8 == len(done.spec.cards())
        design = snapshot.summary["design"]
        print(f"inferred design: {design['design']}, radix {design['switch_radix']}, {design['tiers']} tiers, "
              f"{design['oversubscription']:g}:1, {design['link_gbps']:g} Gb/s, {design['cards_per_host']} cards a host, "
              f"{design['servers_per_unit']} servers a unit")
        if whatif:
            grow(snapshot)
    finally:
        connection.close()
        scratch.close()


def grow(snapshot) -> None:
    """The staged what-if of the stored snapshot, its cells run here one after another (the
    product spreads them over the workers): 1x (rebuilt and as uploaded), 2x and 4x."""
    from twin.fabrics.selectors import snapshot_spec_get
    from twin.simulations.whatifs import whatif_cell, whatif_cells, whatif_report

    params = {"factors": [1, 2, 4], "alternatives": ["rail"], "collectives": ["allreduce"], "sizes": [2**30]}
    spec, _ = timed("load the snapshot", lambda: snapshot_spec_get(snapshot_id=snapshot.pk))
    plans, full = whatif_cells(spec, params, snapshot_id=snapshot.pk)
    started = time.perf_counter()
    results = {}
    for plan in plans:
        results[plan.key], _ = timed(f"  {plan.label}", lambda plan=plan: whatif_cell(full, plan.params))
    report = whatif_report(full, results, {plan.key: plan.params for plan in plans}, title="bench")
    print(f"{'what-if, all cells':<58} {time.perf_counter() - started:8.2f} s")
    for stage in report["stages"]:
        print(f"  {stage['alternative']:<12} {stage['factor']:g}x {stage['cards']:>7,} cards: "
              f"{stage['tiers']} tiers, allreduce busbw {stage['reference_busbw_GBps'].get('allreduce') or 0:,.1f} GB/s")
    print(f"knee: {report['knee']}")


if __name__ == "__main__":
    main()
