"""Uploaded topology files are read, archives unpacked, in a child process with hard limits on
memory and time (twin.fabrics.reading): past a limit the upload is refused with the limit it hit,
like any unreadable file (a 400 naming the file, nothing stored), and the process that received it
goes on."""
import gzip
import io
import resource
import tarfile
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from twin.fabrics.models import Fabric, Snapshot
from twin.ingest.parsers.canonical import export_canonical
from twin.simcore.generate import fat_tree, supernode

pytestmark = pytest.mark.django_db


def upload(client, name: str, data: bytes):
    return client.post("/api/snapshots/", {"file": [SimpleUploadedFile(name, data)]})


def test_an_upload_needing_more_memory_than_allowed_is_refused_and_nothing_is_stored(operator_client, settings):
    settings.TWIN_PARSE_MEMORY_BYTES = 64 * 2**20  # less than the interpreter with numpy takes
    our_limit = resource.getrlimit(resource.RLIMIT_AS)
    response = upload(operator_client, "small.json", export_canonical(supernode(cards=64, switch_radix=16)).encode())
    assert response.status_code == 400, response.content
    problem = response.json()["files"][0]
    assert problem["source"] == "small.json" and problem["message"] == "reading it needs more than 0.0625 GiB of memory"
    assert "TWIN_PARSE_MEMORY_BYTES" in problem["expected"]
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0
    assert resource.getrlimit(resource.RLIMIT_AS) == our_limit  # the limit was the child's
    settings.TWIN_PARSE_MEMORY_BYTES = 8 * 2**30
    assert upload(operator_client, "small.json", export_canonical(supernode(cards=64, switch_radix=16)).encode()).status_code == 201  # the web process is fine


def test_an_upload_taking_longer_than_allowed_is_refused_and_nothing_is_stored(operator_client, settings):
    settings.TWIN_PARSE_TIME_LIMIT_S = 1
    large = export_canonical(fat_tree(endpoints=32768, radix=64)).encode()  # 2-4 s of parsing on a quiet machine (8,192 once took < 1 s)
    response = upload(operator_client, "large.json", large)
    assert response.status_code == 400, response.content
    assert response.json()["files"][0]["detail"] == "large.json: reading it takes more than 1 s; expected a smaller file, or higher TWIN_PARSE_MEMORY_BYTES / TWIN_PARSE_TIME_LIMIT_S"
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0


def peak_memory_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux counts KiB


def gzip_bomb_tar(member: str, size: int) -> bytes:
    """A .tar.gz whose one member is `size` zero bytes, in about size / 1000 bytes: gzip members
    concatenated (one stream to gunzip), each 16 MiB of zeros compressed once, not `size` bytes
    compressed."""
    header = tarfile.TarInfo(member)
    header.size = size
    piece = 16 * 2**20
    assert size % piece == 0
    return b"".join([
        gzip.compress(header.tobuf(format=tarfile.PAX_FORMAT)),
        gzip.compress(bytes(piece)) * (size // piece),
        gzip.compress(bytes(2 * tarfile.RECORDSIZE)),  # the end-of-archive blocks
    ])


def test_an_archive_unpacking_past_the_memory_limit_is_refused_by_the_reading_child(operator_client, settings):
    """A zip bomb that archive limits set too lax let through: the child's memory limit stops it,
    and the web process never holds the unpacked bytes."""
    bomb = gzip_bomb_tar("node01.xml", 2**30)
    settings.TWIN_PARSE_MEMORY_BYTES = 512 * 2**20
    settings.TWIN_MAX_UPLOAD_BYTES = settings.TWIN_ARCHIVE_MAX_UNPACKED_BYTES = 2 * 2**30
    settings.TWIN_ARCHIVE_MAX_RATIO = 10**6
    peak_before = peak_memory_bytes()
    response = upload(operator_client, "hosts.tgz", bomb)
    assert response.status_code == 400, response.content
    problem = response.json()["files"][0]
    assert problem["source"] == "hosts.tgz" and problem["message"] == "reading it needs more than 0.5 GiB of memory"
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0
    assert peak_memory_bytes() - peak_before < 256 * 2**20  # 1 GiB if this process had unpacked it


def test_an_archive_of_too_many_members_for_the_time_limit_is_refused_by_the_reading_child(operator_client, settings):
    flood = io.BytesIO()
    with tarfile.open(fileobj=flood, mode="w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo()
        for number in range(100_000):  # empty files: only headers to read, each costing tarfile a Python loop
            info.name = f"node{number:06d}.xml"
            tar.addfile(info)
    settings.TWIN_PARSE_TIME_LIMIT_S = 1
    settings.TWIN_ARCHIVE_MAX_MEMBERS = 10**6
    response = upload(operator_client, "hosts.tgz", flood.getvalue())
    assert response.status_code == 400, response.content
    assert response.json()["files"][0]["message"] == "reading it takes more than 1 s"
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in members.items():
            archive.writestr(path, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("archive", "message"),
    [
        (lambda: gzip_bomb_tar("node01.xml", 2**30), "the member unpacks to 1,073,741,824 bytes"),  # its header says so
        (lambda: zip_of({f"n{number}.xml": b"" for number in range(20_001)}), "it holds 20,001 entries"),
        (lambda: zip_of({"rack.zip": zip_of({"row.zip": zip_of({"node01.xml": b"<system/>"})})}), "the member is itself a zip file"),
        (lambda: zip_of({"d/" * 2_000 + "node01.xml": b"<system/>"}), "root element <system>; expected <system version"),  # read, and named
    ],
    ids=["gzip-bomb", "many-members", "nested-archives", "deep-directories"],
)
def test_hostile_archives_are_refused_with_their_reason_within_the_default_limits(operator_client, archive, message):
    peak_before = peak_memory_bytes()
    response = upload(operator_client, "hosts.zip", archive())
    assert response.status_code == 400, response.content
    assert message in response.json()["detail"]
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0
    assert peak_memory_bytes() - peak_before < 256 * 2**20
