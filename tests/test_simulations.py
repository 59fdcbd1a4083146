"""Simulations from the command line and as background runs, with the fabric's calibration."""
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from twin.fabrics.models import Fabric
from twin.runs.models import Run, RunKind, RunStatus
from twin.runs.services import run_execute
from twin.simulations.services import collective_simulate, fabric_calibrate

pytestmark = pytest.mark.django_db


def test_generate_fabric_designs(capsys):
    call_command("generate-fabric", "--name", "ft", "--cards", "256", "--radix", "16", "--json")
    made = json.loads(capsys.readouterr().out)
    assert made["nodes_by_kind"]["card"] == 256 and made["switches_by_tier"] == {"core": 16, "leaf": 32, "spine": 32}
    call_command("generate-fabric", "--name", "two", "--cards", "128", "--radix", "16", "--design", "supernodes", "--supernodes", "2", "--json")
    two = json.loads(capsys.readouterr().out)
    assert two["links_by_domain"]["scale-out"] > 0 and two["nodes_by_kind"]["card"] == 128
    with pytest.raises(CommandError, match="split evenly"):
        call_command("generate-fabric", "--name", "bad", "--cards", "100", "--design", "supernodes", "--supernodes", "3")


def test_simulate_command_json(small_snapshot, capsys):
    call_command("simulate", "--fabric", "small", "--collective", "allreduce", "--bytes", "64MiB", "--algorithm", "ring", "--json")
    result = json.loads(capsys.readouterr().out)
    assert {"time_s", "algbw_GBps", "busbw_GBps", "algorithm", "bottleneck", "max_link_utilization"} <= set(result)
    assert result["algorithm"] == "ring" and result["ranks"] == 64
    # A non-blocking fabric at 400 Gb/s: ring busbw approaches the 50 GB/s port, never above it.
    assert 40 < result["busbw_GBps"] <= 50
    with pytest.raises(CommandError, match="cannot read size"):
        call_command("simulate", "--fabric", "small", "--bytes", "lots")


@pytest.mark.django_db
def test_simulate_command_names_an_uploaded_fabrics_links_as_people_do(capsys):
    lab = Path(__file__).resolve().parent / "data" / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt"
    call_command("ingest", str(lab), "--fabric", "lab")
    capsys.readouterr()
    call_command("simulate", "--fabric", "lab", "--bytes", "16MiB", "--algorithm", "ring")
    hottest = [line for line in capsys.readouterr().out.splitlines() if " -> " in line]
    assert hottest and all("ib:" not in line for line in hottest), hottest
    assert any("leaf01" in line or "node01/mlx5_0" in line for line in hottest), hottest


def test_collective_run_keeps_per_link_data_apart(small_snapshot):
    run = Run.objects.create(kind=RunKind.COLLECTIVE, snapshot=small_snapshot, params={"collective": "allgather", "size_bytes": 2**24, "algorithm": "auto", "ecmp": "hash", "channels": 1, "in_switch_reduction": None})
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert "link_utilization" not in run.result and "choice" in run.result
    assert len(run.detail["link_utilization"]) == small_snapshot.link_count


def test_collective_run_api_validates_params(operator_client, small_snapshot):
    post = lambda params: operator_client.post("/api/runs/", {"kind": "collective", "snapshot": small_snapshot.pk, "params": params}, content_type="application/json")  # noqa: E731
    bad = post({"collective": "allsum", "size_bytes": 10})
    assert bad.status_code == 400 and "collective" in bad.json()["params"]
    assert post({"collective": "allreduce"}).status_code == 400


def test_impossible_request_fails_the_run_with_the_cores_reason(small_snapshot):
    run = Run.objects.create(kind=RunKind.COLLECTIVE, snapshot=small_snapshot, params={"collective": "allreduce", "size_bytes": 1e6, "algorithm": "in_switch", "ecmp": "hash", "channels": 1, "in_switch_reduction": False})
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.error and "Error:" not in run.error.split(" ")[0]


def test_calibration_is_stored_and_used(small_snapshot):
    fabric = small_snapshot.fabric
    before = collective_simulate(snapshot=small_snapshot, collective="allreduce", size_bytes=2**26, algorithm="ring")["busbw_GBps"]
    measured = [(size, busbw * 0.6) for size, busbw in [(2**20, 10.0), (2**24, 30.0), (2**26, before), (2**28, before), (2**30, before)]]
    # The curve is the twin's own at 0.6 of its bandwidth: it determines the efficiency, not a
    # per-hop latency (fitted too, that would be refused as undetermined).
    fitted = fabric_calibrate(fabric=fabric, snapshot=small_snapshot, points=measured, source="test curve", fit=("scale_up.efficiency",))
    fabric.refresh_from_db()
    assert fabric.transport == fitted["transport"] and fabric.calibration["source"] == "test curve"
    small_snapshot.refresh_from_db()
    after = collective_simulate(snapshot=small_snapshot, collective="allreduce", size_bytes=2**26, algorithm="ring")["busbw_GBps"]
    assert after < before * 0.8  # the calibrated (slower) transport is what later runs use


def test_a_calibration_keeps_the_fabrics_other_settings_and_fits_on_top_of_them(small_snapshot):
    """The fabric's Simple protocol runs at 0.5 of line rate (a stored setting); the measured
    curve is the twin's own with it. Fitting the LL128 efficiency must not drop that setting,
    nor fit as if it were not there."""
    fabric = small_snapshot.fabric
    fabric.transport = {"scale_up": {"Simple": {"efficiency": 0.5}}}
    fabric.save(update_fields=["transport"])
    sizes = [2**20, 2**24, 2**26, 2**28, 2**30]
    measured = [
        (size, collective_simulate(snapshot=small_snapshot, collective="allreduce", size_bytes=size, algorithm="ring", protocol="Simple")["busbw_GBps"])
        for size in sizes
    ]
    fitted = fabric_calibrate(
        fabric=fabric, snapshot=small_snapshot, points=measured, source="own curve", algorithm="ring", protocol="Simple",
        fit=("scale_up.Simple.base_latency_ns",),
    )
    fabric.refresh_from_db()
    assert fabric.transport["scale_up"]["Simple"]["efficiency"] == 0.5
    assert "base_latency_ns" in fabric.transport["scale_up"]["Simple"]
    assert fitted["max_relative_error"] < 0.01  # fitted with the stored efficiency in place


def test_a_run_can_override_the_transport(small_snapshot):
    from twin.simcore.errors import TwinCoreError

    base = collective_simulate(snapshot=small_snapshot, collective="allreduce", size_bytes=2**26, algorithm="ring", protocol="Simple")
    slower = collective_simulate(snapshot=small_snapshot, collective="allreduce", size_bytes=2**26, algorithm="ring", protocol="Simple", transport={"scale_up": {"efficiency": 0.5}})
    assert slower["protocol"] == "Simple"
    assert slower["bandwidth_s"] == pytest.approx(base["bandwidth_s"] * 2, rel=1e-9)
    with pytest.raises(TwinCoreError, match="unknown transport"):
        collective_simulate(snapshot=small_snapshot, collective="allreduce", size_bytes=2**26, transport={"warp_drive": 1})


def test_transports_stored_before_protocols_lose_the_replaced_overheads(small_snapshot):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("twin.fabrics.migrations.0004_transport_per_protocol")
    fabric = small_snapshot.fabric
    fabric.transport = {"scale_up": {"step_overhead_ns": 21400.0, "efficiency": 0.7}, "scale_out": {"chunk_bytes": 1}, "in_switch_latency_ns": 57600.0}
    fabric.save(update_fields=["transport"])
    migration.drop_replaced_parameters(apps, None)
    fabric.refresh_from_db()
    assert fabric.transport == {"scale_up": {"efficiency": 0.7}, "in_switch_latency_ns": 57600.0}
    result = collective_simulate(snapshot=small_snapshot, collective="allreduce", size_bytes=2**26, algorithm="ring", protocol="Simple")
    assert result["settings"]["transport"]["scale_up"]["efficiency"] == 0.7
