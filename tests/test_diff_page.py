"""The snapshot diff page: every finding reachable a page at a time, filtered and sorted on the server."""
import dataclasses
import re

import pytest

from twin.fabrics.services import snapshot_create
from twin.simcore.diff import SEVERITIES
from twin.simcore.generate import supernode
from twin.simcore.model import LinkSpec

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr class="finding" data-class="(\w+)"[^>]*><td>.*?</td><td>(\w+)</td><td>([^<]*)</td><td>([^<]*)</td>')


@pytest.fixture
def recabled():
    """A 256-card super-node, then the same with 120 leaf-spine cables gone, 5 links at half speed
    (major findings) and 3 cables nobody planned (minor)."""
    planned = supernode(cards=256, switch_radix=32, name="recabled")
    uplinks = [position for position, link in enumerate(planned.links) if link.a.startswith("leaf") and link.b.startswith("spine")]
    gone, slow = set(uplinks[:120]), set(uplinks[120:125])
    links = tuple(
        dataclasses.replace(link, bandwidth_gbps=link.bandwidth_gbps / 2) if position in slow else link
        for position, link in enumerate(planned.links)
        if position not in gone
    ) + tuple(LinkSpec(f"leaf-0{number}", "extra", f"spine-0{number}", "extra", 400, 10) for number in (1, 2, 3))
    store = dict(fabric_name="recabled", source_name="generated", source_format="generated", checksum="0" * 64)
    expected = snapshot_create(spec=planned, **store)
    found = snapshot_create(spec=dataclasses.replace(planned, links=links), **store)
    return expected, found


def rows(client, expected, found, **query):
    response = client.get(f"/fabrics/{expected.fabric_id}/diff/", {"expected": expected.pk, "found": found.pk, **query})
    assert response.status_code == 200
    return ROW.findall(response.content.decode())


def test_every_finding_is_a_page_away(viewer_client, recabled):
    first, second = rows(viewer_client, *recabled), rows(viewer_client, *recabled, page=2)
    assert len(first) == 100 and len(second) == 28
    assert len({row[2:] for row in first + second}) == 128  # no finding twice, none left out


def test_findings_filter_by_class_severity_and_text(viewer_client, recabled):
    degraded = rows(viewer_client, *recabled, **{"class": "DEGRADED"})
    assert len(degraded) == 5 and {row[0] for row in degraded} == {"DEGRADED"}
    spine = rows(viewer_client, *recabled, q="SPINE-03")
    assert spine and all("spine-03" in (row[2] + row[3]).lower() for row in spine)
    assert rows(viewer_client, *recabled, **{"class": "DEGRADED", "severity": "critical"}) == []


@pytest.mark.parametrize("sort", ["severity", "-severity", "peer", "-where"])
def test_findings_sort_on_the_server(viewer_client, recabled, sort):
    everything = rows(viewer_client, *recabled, sort=sort) + rows(viewer_client, *recabled, sort=sort, page=2)
    keys = {
        "severity": [SEVERITIES.index(row[1]) for row in everything],
        "peer": [row[3] for row in everything],
        "where": [row[2] for row in everything],
    }[sort.removeprefix("-")]
    assert keys == sorted(keys, reverse=sort.startswith("-")) and len(set(keys)) > 1


def test_junk_parameters_give_the_default_view(viewer_client, recabled):
    assert rows(viewer_client, *recabled, sort="nonsense", page="x", severity="<b>") == []
    assert len(rows(viewer_client, *recabled, sort="nonsense", page="99")) == 28  # the last page


def test_page_offers_the_previous_version_against_the_latest_with_readable_sorts(viewer_client, recabled):
    expected, found = recabled
    page = viewer_client.get(f"/fabrics/{expected.fabric_id}/diff/").content.decode()
    chosen = dict(re.findall(r'<select name="(expected|found)">.*?<option value="(\d+)" selected>', page, re.DOTALL))
    assert chosen == {"expected": str(expected.pk), "found": str(found.pk)}
    sorts = re.findall(r'<option value="(-?\w+)"[^>]*>([^<]+)</option>', viewer_client.get(f"/fabrics/{expected.fabric_id}/diff/", {"expected": expected.pk, "found": found.pk}).content.decode())
    labels = dict(sorts)
    assert labels["-peer"] == "Peer (Z-A)" and labels["severity"] == "Severity (critical first)"
    assert not any(label.startswith("-") for _value, label in sorts)
