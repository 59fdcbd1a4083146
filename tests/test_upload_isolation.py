"""Uploaded topology files are read in a child process with hard limits on memory and time
(twin.fabrics.reading): past a limit the upload is refused with the limit it hit, like any
unreadable file (a 400 naming the file, nothing stored), and the process that received it goes on."""
import resource

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
    large = export_canonical(fat_tree(endpoints=8192, radix=64)).encode()  # several seconds of parsing on any machine
    response = upload(operator_client, "large.json", large)
    assert response.status_code == 400, response.content
    assert response.json()["files"][0]["detail"] == "large.json: reading it takes more than 1 s; expected a smaller file, or higher TWIN_PARSE_MEMORY_BYTES / TWIN_PARSE_TIME_LIMIT_S"
    assert Fabric.objects.count() == 0 and Snapshot.objects.count() == 0
