"""The experiment journal: nccl-tests output in, prediction beside it, filters, CSV, calibration."""
import csv
import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from twin.journal.models import Experiment

pytestmark = pytest.mark.django_db
SAMPLE = Path(__file__).parent / "data" / "traces" / "nccl-tests_all_reduce_perf_8gpu_classic.txt"


def record(client, fabric_id, **fields):
    return client.post(f"/fabrics/{fabric_id}/journal/new/", fields)


def test_nccl_tests_report_becomes_an_entry_with_the_twins_prediction(operator_client, small_snapshot):
    fabric_id = small_snapshot.fabric_id
    response = record(operator_client, fabric_id, files=SimpleUploadedFile("ar.txt", SAMPLE.read_bytes()), comm_library="NCCL", library_version="2.18.5", notes="after firmware update")
    assert response.status_code == 302, response.content.decode()[-2000:]
    entry = Experiment.objects.get()
    assert entry.collective == "allreduce" and entry.card_count == 8 and entry.snapshot == small_snapshot
    assert len(entry.points) == len(entry.predicted) > 5
    assert all(abs(p["error"] - (p["busbw_GBps"] / m["busbw_GBps"] - 1)) < 1e-9 for p, m in zip(entry.predicted, entry.points))
    page = operator_client.get(response.url)
    assert page.status_code == 200 and b"<svg" in page.content and b"after firmware update" in page.content
    assert b"1 journal entry recorded." in page.content


def test_predictions_use_the_runs_own_algorithm_and_protocol(operator_client, small_snapshot):
    fabric_id = small_snapshot.fabric_id
    recorded = record(operator_client, fabric_id, collective="allreduce", card_count=8, manual_points="1024 0.1\n1073741824 300", algorithm="Ring", protocol="LL")
    assert recorded.status_code == 302, recorded.content.decode()[-2000:]
    default = record(operator_client, fabric_id, collective="allreduce", card_count=8, manual_points="1024 0.1\n1073741824 300")
    assert default.status_code == 302
    as_run, as_default = Experiment.objects.order_by("pk")
    assert [(p["algorithm"], p["protocol"]) for p in as_run.predicted] == [("ring", "LL"), ("ring", "LL")]
    # Left to the library: the twin picks, as NCCL's tuner would (LL would halve 1 GiB's bandwidth).
    assert as_default.predicted[1]["protocol"] != "LL"
    assert as_run.predicted[1]["time_s"] > 1.5 * as_default.predicted[1]["time_s"]
    page = operator_client.get(f"/fabrics/{fabric_id}/journal/{as_run.pk}/")
    assert page.status_code == 200 and b"ring (LL)" in page.content


def test_points_by_hand_and_bad_input(operator_client, small_snapshot):
    fabric_id = small_snapshot.fabric_id
    ok = record(operator_client, fabric_id, collective="allgather", card_count=16, manual_points="1048576 20\n16777216, 40\n")
    assert ok.status_code == 302 and Experiment.objects.get().predicted[1]["size_bytes"] == 16777216
    assert record(operator_client, fabric_id, collective="allgather", card_count=16, manual_points="1048576 twenty").status_code == 400
    too_many = record(operator_client, fabric_id, collective="allreduce", card_count=4096, manual_points="1024 1")
    assert too_many.status_code == 400 and b"only 64" in too_many.content
    broken = record(operator_client, fabric_id, files=SimpleUploadedFile("junk.txt", b"\x00\x01binary"))
    assert broken.status_code == 400 and b"junk.txt" in broken.content
    assert Experiment.objects.count() == 1


def test_filters_sort_csv_and_pages(viewer_client, operator_client, small_snapshot):
    fabric_id = small_snapshot.fabric_id
    for index in range(3):
        record(operator_client, fabric_id, collective="allreduce", card_count=8, manual_points=f"1048576 {10 + index}", title=f"run {index}", comm_library="NCCL" if index else "HCCL")
    listing = viewer_client.get(f"/fabrics/{fabric_id}/journal/", {"library": "HCCL"})
    assert b"run 0" in listing.content and b"run 1" not in listing.content
    ordered = viewer_client.get(f"/fabrics/{fabric_id}/journal/", {"sort": "-peak_busbw_GBps"}).content.decode()
    assert ordered.index("run 2") < ordered.index("run 0")
    assert '<option value="-created_at">Newest first</option>' in ordered and ">-created_at<" not in ordered
    exported = viewer_client.get(f"/fabrics/{fabric_id}/journal/", {"format": "csv", "q": "run"})
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert len(rows) == 3 and {"measured_busbw_GBps", "predicted_busbw_GBps", "relative_error"} <= set(rows[0])


SLOWER = {"scale_up": {"efficiency": 0.6, "Simple": {"hop_latency_ns": 5000.0}}}
SIZES = [2**20, 2**22, 2**24, 2**26, 2**28, 2**30]


def slower_points(snapshot, cards: int = 64) -> str:
    """What the small fabric's first `cards` cards would measure in a Simple ring with a slower
    transport than the defaults: "size busbw" lines."""
    from twin.fabrics.selectors import snapshot_spec_get
    from twin.simcore.simulate import Simulator

    spec = snapshot_spec_get(snapshot_id=snapshot.pk)
    slower = Simulator(spec, ranks=[card.id for card in spec.cards()][:cards], transport=SLOWER)
    return "\n".join(f"{size} {slower.run('allreduce', size, 'ring', 'Simple')['busbw_GBps']}" for size in SIZES)


def nccl_tests_report(points: str) -> str:
    """An all_reduce_perf report on the sample's 8 GPUs with these "size busbw" points."""
    header = SAMPLE.read_text().splitlines()[:15]
    rows = []
    for line in points.splitlines():
        size, busbw = int(line.split()[0]), float(line.split()[1])
        algbw = busbw / (2 * 7 / 8)
        timing = f"{size / algbw / 1e3:10.2f} {algbw:7.2f} {busbw:7.2f}      0"
        rows.append(f"{size:12d} {size // 4:13d}     float     sum      -1 {timing} {timing}")
    return "\n".join([*header, *rows, "# Avg bus bandwidth    : 1.0", ""])


def calibrate_from_page(client, fabric_id, entries, **fields):
    return client.post(f"/fabrics/{fabric_id}/journal/calibrate/", {"experiment": [entry.pk for entry in entries], **fields}, follow=True)


def test_calibration_of_chosen_parameters_from_chosen_entries(operator_client, small_snapshot):
    fabric_id = small_snapshot.fabric_id
    record(operator_client, fabric_id, collective="allreduce", card_count=64, manual_points=slower_points(small_snapshot), algorithm="Ring", protocol="Simple", title="slow ring")
    journal = operator_client.get(f"/fabrics/{fabric_id}/journal/").content.decode()
    assert 'value="scale_up.Simple.hop_latency_ns"' in journal and 'name="held_out"' in journal
    response = calibrate_from_page(operator_client, fabric_id, Experiment.objects.all(), fit=["scale_up.efficiency", "scale_up.Simple.hop_latency_ns"])
    page = response.content.decode()
    assert response.status_code == 200 and "Calibrated: simulations of small now use the fitted transport." in page, page[-3000:]
    fabric = small_snapshot.fabric
    fabric.refresh_from_db()
    fitted = fabric.calibration["parameters"]
    assert fitted["scale_up.efficiency"] == pytest.approx(0.6, rel=1e-3) and fitted["scale_up.Simple.hop_latency_ns"] == pytest.approx(5000, rel=1e-2)
    assert fabric.transport["scale_up"]["efficiency"] == fitted["scale_up.efficiency"]
    assert set(fabric.calibration["standard_errors"]) == set(fitted) and "<code>scale_up.Simple.hop_latency_ns</code>" in page and "±" in page


def test_validation_holds_sizes_out_and_changes_nothing(operator_client, small_snapshot):
    fabric_id = small_snapshot.fabric_id
    record(operator_client, fabric_id, collective="allreduce", card_count=64, manual_points=slower_points(small_snapshot), algorithm="Ring", protocol="Simple")
    response = calibrate_from_page(operator_client, fabric_id, Experiment.objects.all(), fit=["scale_up.efficiency"], held_out="16MiB, 1GiB")
    page = response.content.decode()
    assert response.status_code == 200 and "Validation: at the held-out sizes" in page and page.count('class="held-out"') == 2
    small_snapshot.fabric.refresh_from_db()
    assert small_snapshot.fabric.transport == {} and small_snapshot.fabric.calibration == {}
    unknown = calibrate_from_page(operator_client, fabric_id, Experiment.objects.all(), fit=["scale_up.efficiency"], held_out="16MB")
    assert b"held-out sizes 16,000,000 are not among the measured sizes" in unknown.content
    unreadable = calibrate_from_page(operator_client, fabric_id, Experiment.objects.all(), fit=["scale_up.efficiency"], held_out="lots")
    assert b"cannot read size" in unreadable.content
    nothing = calibrate_from_page(operator_client, fabric_id, Experiment.objects.all())
    assert b"Choose at least one parameter to fit." in nothing.content


def test_a_non_physical_fit_is_refused_and_stores_nothing(operator_client, small_snapshot):
    """The sample ran on NVLink (about 160 GB/s busbw); this fabric has 50 GB/s ports: the link
    efficiency would have to exceed 1."""
    fabric_id = small_snapshot.fabric_id
    record(operator_client, fabric_id, files=SimpleUploadedFile("ar.txt", SAMPLE.read_bytes()))
    response = calibrate_from_page(operator_client, fabric_id, Experiment.objects.all(), fit=["scale_up.efficiency"])
    assert b"Calibration failed: the measurements ask for scale_up.efficiency beyond its physical range" in response.content
    small_snapshot.fabric.refresh_from_db()
    assert small_snapshot.fabric.transport == {} and small_snapshot.fabric.calibration == {}


def test_calibration_runs_the_entries_own_algorithm_and_protocol(operator_client, small_snapshot):
    from twin.common.errors import ApplicationError
    from twin.journal.services import experiments_calibrate

    fabric_id = small_snapshot.fabric_id
    for algorithm in ("Ring", "Tree"):
        record(operator_client, fabric_id, collective="allreduce", card_count=8, manual_points="1048576 10\n16777216 30\n268435456 40\n1073741824 42", algorithm=algorithm, protocol="Simple")
    ring, tree = Experiment.objects.order_by("pk")
    with pytest.raises(ApplicationError, match="one algorithm and protocol at a time"):
        experiments_calibrate(experiments=[ring, tree])
    fitted = experiments_calibrate(experiments=[ring])
    assert {(point["algorithm"], point["protocol"]) for point in fitted["points"]} == {("ring", "Simple")}


def test_viewers_cannot_record(viewer_client, small_snapshot):
    assert viewer_client.get(f"/fabrics/{small_snapshot.fabric_id}/journal/new/").status_code == 403


def test_cli_records_and_validates(small_snapshot, capsys, tmp_path):
    import json as jsonlib

    from django.core.management import call_command

    measured = tmp_path / "slow.txt"
    measured.write_text(nccl_tests_report(slower_points(small_snapshot, cards=8)))
    call_command("journal-import", str(measured), "--fabric", "small", "--algorithm", "Ring", "--protocol", "Simple",
                 "--calibrate", "--fit", "scale_up.efficiency", "--hold-out", "1MiB,1GiB", "--json")
    summary = jsonlib.loads(capsys.readouterr().out)
    assert summary["entries"][0]["cards"] == 8 and Experiment.objects.count() == 1
    check = summary["calibration"]["validation"]
    assert check["held_out_sizes"] == [2**20, 2**30] and check["max_relative_error"] >= 0
    assert set(summary["calibration"]["standard_errors"]) == {"scale_up.efficiency"}


def test_a_failed_cli_calibration_records_nothing(small_snapshot):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    # NVLink figures on 50 GB/s ports: the fit is refused, and the entry goes with it.
    with pytest.raises(CommandError, match="beyond its physical range.*Nothing was recorded"):
        call_command("journal-import", str(SAMPLE), "--fabric", "small", "--calibrate", "--fit", "scale_up.efficiency")
    assert Experiment.objects.count() == 0
    with pytest.raises(CommandError, match="cannot fit"):
        call_command("journal-import", str(SAMPLE), "--fabric", "small", "--calibrate", "--fit", "warp.drive")
    assert Experiment.objects.count() == 0
    small_snapshot.fabric.refresh_from_db()
    assert small_snapshot.fabric.transport == {}


def test_a_cloud_hosts_nccl_tests_are_predicted_on_its_completed_scale_up(tmp_path, capsys):
    """An Azure ND A100 v4 hint file leaves NVLink out; with the NVSwitch the twin completes,
    the host's nccl-tests run gets a prediction at every size instead of 'no algorithm'."""
    import json

    from django.core.management import call_command

    data = Path(__file__).resolve().parent / "data"
    hint, measured = data / "nccl_xml" / "azure-ndv4-topo.xml", data / "traces" / "nccl-tests_all_reduce_perf_8gpu_classic.txt"
    call_command("ingest", str(hint), "--fabric", "ndv4")
    capsys.readouterr()
    call_command("journal-import", str(measured), "--fabric", "ndv4", "--json")
    imported = json.loads(capsys.readouterr().out)
    experiment = Experiment.objects.get()
    assert imported and len(experiment.predicted) == len(experiment.points) > 10
    # NVLink 3 at 2,400 Gb/s: large all-reduces run at NVLink speed, not PCIe's (about 31 GB/s).
    assert max(point["busbw_GBps"] for point in experiment.predicted) > 100


def test_predictions_and_calibration_follow_the_recorded_nccl_release(operator_client, db):
    """On 8 H100 with NVLS, a 1 MiB all-reduce fills half of NCCL's 16 channels up to 2.19 and
    all of them from 2.20: an entry recorded as 2.18.5 is predicted slower than one as 2.20.5;
    a report naming its library (nccl-library=22703) records 2.27.3; calibration takes one
    release at a time."""
    from twin.common.errors import ApplicationError
    from twin.fabrics.services import snapshot_create
    from twin.journal.services import experiments_calibrate
    from tests.simcore.fabrics import eight_h100

    snapshot = snapshot_create(fabric_name="dgx", spec=eight_h100(), source_name="generated", source_format="generated", checksum="1" * 64)
    for version in ("2.18.5", "v2.20.5-1"):
        response = record(operator_client, snapshot.fabric_id, collective="allreduce", card_count=8, manual_points="1048576 30\n1073741824 460",
                          algorithm="NVLS", comm_library="NCCL", library_version=version)
        assert response.status_code == 302, response.content.decode()[-2000:]
    old, new = Experiment.objects.order_by("pk")
    assert [p["nccl_version"] for p in old.predicted + new.predicted] == ["2.18.5"] * 2 + ["v2.20.5-1"] * 2
    assert old.predicted[0]["algorithm"] == "in_switch" and old.predicted[0]["time_s"] > 1.03 * new.predicted[0]["time_s"]
    assert abs(old.predicted[1]["time_s"] / new.predicted[1]["time_s"] - 1) < 1e-9  # 1 GiB fills every loop in both
    with pytest.raises(ApplicationError, match="one NCCL release at a time"):
        experiments_calibrate(experiments=[old, new])

    report = Path(__file__).parent / "data" / "traces" / "nccl-tests_all_gather_perf_8gpu_v2.17.txt"
    response = record(operator_client, snapshot.fabric_id, files=SimpleUploadedFile("ag.txt", report.read_bytes()))
    assert response.status_code == 302, response.content.decode()[-2000:]
    imported = Experiment.objects.latest("pk")
    assert (imported.comm_library, imported.library_version) == ("NCCL", "2.27.3")
    assert {p["nccl_version"] for p in imported.predicted} == {"2.27.3"}
