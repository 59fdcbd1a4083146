"""An archive of per-host files uploaded with the fabric dump: through the API, the upload page
and `manage.py ingest` it becomes one snapshot; an archive over a limit is refused with its
reason and nothing is stored. (twin.ingest.archive itself: tests/ingest/test_ingest_archive.py.)"""
import io
import json
from collections import Counter
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings

from twin.fabrics.models import Fabric, Link, Node, Snapshot

pytestmark = pytest.mark.django_db

DATA = Path(__file__).parent / "data"
IB_DUMP = (DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt").read_bytes()
HOSTS = {f"node{n:02d}": (DATA / "archive" / f"node{n:02d}.xml").read_bytes() for n in range(1, 5)}
# The naming forms ops use: the host in the file name, with a suffix, with a tool name, or as the directory.
MEMBER_PATHS = {
    "node01": "node01.xml",
    "node02": "dumps/node02.topo.xml",
    "node03": "topo/node03/nccl_topo.xml",
    "node04": "nccl-node04.xml",
}
CLUTTER = {"__MACOSX/topo/._node01.xml": b"\x00\x05\x16\x07", "topo/.DS_Store": b"\x00\x00\x00\x01Bud1"}


def tar_bytes(members: dict[str, bytes], mode: str = "w:gz") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:
        for path, data in members.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in members.items():
            archive.writestr(path, data)
    return buffer.getvalue()


def host_members() -> dict[str, bytes]:
    return {MEMBER_PATHS[host]: data for host, data in HOSTS.items()} | CLUTTER


def upload(client, *files: tuple[str, bytes], **fields):
    return client.post("/api/snapshots/", {"file": [SimpleUploadedFile(name, data) for name, data in files], **fields})


def cards_from_files(snapshot: Snapshot) -> Counter:
    """Cards per host that a file named (not those standing for an HCA: twin.ingest.completion)."""
    return Counter(
        node.host for node in Node.objects.filter(snapshot=snapshot, kind="card") if node.attrs.get("inferred") != "card"
    )


def assert_nothing_stored() -> None:
    assert (Fabric.objects.count(), Snapshot.objects.count(), Node.objects.count(), Link.objects.count()) == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("archive_name", "pack"),
    [("hosts.tgz", tar_bytes), ("hosts.zip", zip_bytes), ("hosts.tar", lambda members: tar_bytes(members, "w"))],
    ids=["tar.gz", "zip", "tar"],
)
def test_dump_plus_archive_of_host_xmls_is_one_snapshot(operator_client, archive_name, pack):
    response = upload(operator_client, ("ib.txt", IB_DUMP), (archive_name, pack(host_members())), fabric="pod")
    assert response.status_code == 201, response.json()
    snapshot = Snapshot.objects.get()
    assert snapshot.fabric.name == "pod" and snapshot.source_format == "ibnetdiscover+nccl-topo-xml"
    # 8 HCAs, 3 switches and 3 SHARP nodes from the dump; 8 GPUs, 8 NICs and an NVSwitch per host from
    # the XMLs, each host's mlx5_0 being the dump's HCA of the same GUID. The HCAs of node05-08, which
    # no XML describes, stand for one card each.
    assert cards_from_files(snapshot) == {"node01": 8, "node02": 8, "node03": 8, "node04": 8}
    assert snapshot.card_count == 32 + 4 and snapshot.summary["nodes_by_kind"]["nic"] == 8 + 4 * 8 - 4
    for host, path in MEMBER_PATHS.items():
        hca = Node.objects.get(snapshot=snapshot, key=f"ib:0c42a1030086{host[-2:]}00")
        assert hca.host == host and hca.attrs["merged_from"] == ["ib.txt", f"{archive_name}/{path}"]
    assert not any(path in snapshot.source_name for path in CLUTTER)  # skipped, not parsed
    # Every member named its host, and each host is one the dump has.
    assert [warning for warning in snapshot.summary["warnings"] if "host" in warning] == []


def test_a_member_that_names_no_host_is_warned_about_by_its_name(operator_client):
    response = upload(operator_client, ("ib.txt", IB_DUMP), ("hosts.tgz", tar_bytes({"node01.xml": HOSTS["node01"], "topo.xml": HOSTS["node02"]})))
    assert response.status_code == 201, response.json()
    warnings = response.json()["summary"]["warnings"]
    assert any(warning.startswith("hosts.tgz/topo.xml: the file name 'hosts.tgz/topo.xml' names no host") for warning in warnings)
    assert any("directory named after the host (node01/topo.xml)" in warning for warning in warnings)


def test_an_archive_named_otherwise_is_still_unpacked(operator_client):
    response = upload(operator_client, ("ib.txt", IB_DUMP), ("hosts-upload", tar_bytes({"node01.xml": HOSTS["node01"]})))
    assert response.status_code == 201, response.json()
    assert cards_from_files(Snapshot.objects.get()) == {"node01": 8}


def test_a_bad_member_is_named_inside_its_archive(operator_client):
    members = host_members() | {"dumps/node02.topo.xml": HOSTS["node02"][:4000]}
    response = upload(operator_client, ("ib.txt", IB_DUMP), ("hosts.tgz", tar_bytes(members)))
    assert response.status_code == 400
    files = response.json()["files"]
    assert [file["source"] for file in files] == ["hosts.tgz/dumps/node02.topo.xml"]
    assert files[0]["detail"].startswith("hosts.tgz/dumps/node02.topo.xml line ")
    assert_nothing_stored()


def bomb() -> bytes:
    return tar_bytes({"node01.xml": HOSTS["node01"], "node02.xml": bytes(4 * 1024 * 1024)})


@pytest.mark.parametrize(
    ("settings", "archive", "member", "message"),
    [
        ({"TWIN_ARCHIVE_MAX_MEMBERS": 3}, lambda: tar_bytes(host_members()), "nccl-node04.xml", "it holds more than 3 entries; expected at most 3 entries"),
        ({"TWIN_ARCHIVE_MAX_MEMBERS": 3}, lambda: zip_bytes(host_members()), None, "it holds 6 entries; expected at most 3 entries"),
        ({"TWIN_ARCHIVE_MAX_UNPACKED_BYTES": 15_000}, lambda: tar_bytes(host_members()), "topo/node03/nccl_topo.xml", "it unpacks to more than 15,000 bytes; expected at most 15,000 bytes unpacked in all"),
        ({"TWIN_MAX_UPLOAD_BYTES": 6_000}, lambda: tar_bytes(host_members()), "node01.xml", "the member unpacks to 7,351 bytes; expected members of at most 6,000 bytes"),
        ({}, bomb, "node02.xml", "unpacks to more than 200 times its compressed size"),
        ({"TWIN_ARCHIVE_MAX_RATIO": 20}, lambda: tar_bytes(host_members()), None, None),  # passes: about 10:1
        ({}, lambda: tar_bytes({"../node01.xml": HOSTS["node01"]}), "../node01.xml", "the member's path leaves the archive (..)"),
        ({}, lambda: tar_bytes({"/etc/node01.xml": HOSTS["node01"]}), "/etc/node01.xml", "the member has an absolute path"),
        ({}, lambda: tar_bytes({"rack1.tgz": tar_bytes(host_members())}), "rack1.tgz", "the member is itself a tar.gz file"),
        ({}, lambda: tar_bytes(CLUTTER), None, "the archive holds no files"),
        ({}, lambda: (lambda data: data[: len(data) // 2])(tar_bytes(host_members())), None, "the archive is truncated or damaged"),
    ],
    ids=["members-tar", "members-zip", "total", "member-size", "ratio", "ratio-passes", "dotdot", "absolute", "nested", "only-clutter", "truncated"],
)
def test_archive_limits_are_refused_through_the_api_and_nothing_is_stored(operator_client, settings, archive, member, message):
    with override_settings(**settings):
        response = upload(operator_client, ("ib.txt", IB_DUMP), ("hosts.tgz", archive()))
    if message is None:
        assert response.status_code == 201, response.json()
        return
    assert response.status_code == 400
    body = response.json()
    assert message in body["detail"]
    [refused] = body["files"]
    assert refused["source"] == "hosts.tgz" and refused["path"] == member and message in refused["detail"]
    assert_nothing_stored()


def test_the_upload_page_takes_an_archive(operator_client):
    assert ".tar, .tar.gz or .zip archive" in operator_client.get("/upload/").content.decode()
    response = operator_client.post(
        "/upload/",
        {"file": [SimpleUploadedFile("ib.txt", IB_DUMP), SimpleUploadedFile("hosts.zip", zip_bytes(host_members()))], "fabric": "page-pod", "format": "", "role": "discovered"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["summary"]["nodes_by_kind"]["card"] == 32 + 4
    assert cards_from_files(Snapshot.objects.get()) == {"node01": 8, "node02": 8, "node03": 8, "node04": 8}
    response = operator_client.post(
        "/upload/",
        {"file": [SimpleUploadedFile("hosts.tgz", tar_bytes({"../x.xml": HOSTS["node01"]}))], "fabric": "", "format": "", "role": "discovered"},
    )
    assert response.status_code == 400
    assert "hosts.tgz (../x.xml): the member&#x27;s path leaves the archive (..)" in response.content.decode()
    assert Snapshot.objects.count() == 1


def test_cli_ingests_a_dump_and_an_archive_as_one_snapshot(tmp_path, capsys):
    (tmp_path / "ib.txt").write_bytes(IB_DUMP)
    (tmp_path / "hosts.tgz").write_bytes(tar_bytes(host_members()))
    call_command("ingest", str(tmp_path / "ib.txt"), str(tmp_path / "hosts.tgz"), "--fabric", "cli-pod", "--json")
    printed = json.loads(capsys.readouterr().out)
    assert printed["snapshot"] == 1 and printed["format"] == "ibnetdiscover+nccl-topo-xml" and printed["nodes"]["card"] == 32 + 4
    (tmp_path / "bomb.tgz").write_bytes(bomb())
    with pytest.raises(CommandError, match="nothing was stored"):
        call_command("ingest", str(tmp_path / "ib.txt"), str(tmp_path / "bomb.tgz"), "--fabric", "cli-pod")
    assert "bomb.tgz (node02.xml): the archive unpacks to more than 200 times" in capsys.readouterr().err
    assert Snapshot.objects.count() == 1


def test_a_member_that_is_no_topology_is_named_not_dropped(operator_client):
    members = host_members() | {"README.md": b"# node dumps, collected 2025-06-02\n"}
    response = upload(operator_client, ("ib.txt", IB_DUMP), ("hosts.tgz", tar_bytes(members)))
    assert response.status_code == 400
    [refused] = response.json()["files"]
    assert refused["detail"].startswith("hosts.tgz/README.md: cannot tell the format of this file")
    assert_nothing_stored()
