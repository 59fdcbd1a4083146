"""Prometheus answers into telemetry frames: the label mapping, its checks, and the frame."""
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from twin.ingest.registry import parse_fabric
from twin.replay import TelemetryError, decode_frame
from twin.replay.prometheus import error_counters, error_totals, prometheus_mapping, rates_frame, series_ports
from twin.replay.telemetry import TelemetryIndex

DATA = Path(__file__).resolve().parents[1] / "data"


def vector(*series, t=1796000000.0):
    return {"resultType": "vector", "result": [{"metric": labels, "value": [t, str(value)]} for labels, value in series]}


def test_queries_of_counters_use_rate_and_gauges_are_read_as_they_are():
    infiniband = prometheus_mapping({"selector": 'job="ib"'}, preset="node_exporter_infiniband").queries(30)
    assert infiniband["tx_bytes"] == 'rate(node_infiniband_port_data_transmitted_bytes_total{job="ib"}[30s])'
    assert set(infiniband) == {"tx_bytes", "rx_bytes", "xmit_wait"}  # the error counters: one query for all
    assert prometheus_mapping({"selector": 'job="ib"'}, preset="node_exporter_infiniband").errors_query() == (
        '{__name__=~"node_infiniband_link_downed_total|node_infiniband_link_error_recovery_total|node_infiniband_port_discards_transmitted_total'
        '|node_infiniband_port_errors_received_total|node_infiniband_symbol_error_total",job="ib"} > 0'
    )
    nvlink = prometheus_mapping(None, preset="dcgm_nvlink")
    assert nvlink.queries(30)["tx_bytes"] == "DCGM_FI_PROF_NVLINK_TX_BYTES" and nvlink.errors_query().startswith('{__name__=~"DCGM_FI_DEV_NVLINK_CRC_FLIT')
    gauge = prometheus_mapping({"errors": {"symbol_errors": {"metric": "ib_symbol_errors_per_second", "type": "gauge"}}}, preset="node_exporter_infiniband")
    assert gauge.queries(30)["errors.symbol_errors"] == "ib_symbol_errors_per_second" and gauge.errors_query() is None


def test_a_mapping_that_cannot_work_lists_its_problems():
    with pytest.raises(TelemetryError) as caught:
        prometheus_mapping({"node": "{host!r}", "tx_bytes": {"metric": "x", "type": "histogram"}, "selector": "job=ib", "colour": "red"}, preset="node_exporter_infiniband")
    assert caught.value.problems == (
        "colour: unknown key; expected one of errors, lane, node, nodes, port, rx_bytes, selector, tx_bytes, xmit_wait, xmit_wait_bytes",
        "tx_bytes.type: 'histogram'; expected \"counter\" (asked for as rate()) or \"gauge\" (already per second)",
        "node: '{host!r}'; expected label names in braces, such as {device}",
        "selector: 'job=ib'; expected label matchers such as job=\"infiniband\", cluster=~\"a|b\"",
    )
    with pytest.raises(TelemetryError, match="preset 'snmp'"):
        prometheus_mapping({}, preset="snmp")


def test_infiniband_rates_become_a_frame_and_unknown_series_are_named():
    index = TelemetryIndex(parse_fabric((DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt").read_text(), source_name="dump"))
    mapping = prometheus_mapping({}, preset="node_exporter_infiniband")
    node01 = {"instance": "node01.cluster.local:9100", "device": "mlx5_0", "port": "1", "job": "ib"}
    answers = {
        "tx_bytes": vector((node01, 25e9), ({"instance": "node01:9100", "device": "mlx5_1", "port": "1"}, 1e9)),
        "rx_bytes": vector((node01, 5e9)),
        "xmit_wait": vector((node01, 2.5e9 / 8)),  # ticks/s: 2.5 GB/s of lost time at 8 bytes per tick
    }
    symbol_errors = {"__name__": "node_infiniband_symbol_error_total", **node01}
    cache, counts = {}, {}
    error_counters(index, mapping, vector((symbol_errors, 100), t=1796000000.0 - 10), previous=counts, ports_of=cache)  # the previous poll
    counters = error_counters(index, mapping, vector((symbol_errors, 115)), previous=counts, ports_of=cache)
    frame = rates_frame(index, mapping, answers, window_s=30, ports_of=cache, error_counters=counters)
    decoded = decode_frame(frame)
    link = 14  # node01's HCA to leaf01
    assert decoded.utilization[link] == pytest.approx(0.5, abs=1 / 255)
    assert decoded.congestion[link] == pytest.approx(0.55, abs=2 / 255)  # sent plus waiting to send
    report = frame["telemetry"]
    assert report["unknown"] == ["node01/mlx5_1: no node of the fabric has this id, name or description"]
    assert report["errors"] == [{"node": "ib:0c42a10300860100", "port": "1", "link": link, "counters": {"symbol_errors": 15}}]
    assert (frame["t_s"], frame["t_end_s"]) == (1796000000.0 - 30, 1796000000.0)
    assert len(cache) == 2  # each label set resolved once, kept for the next poll


def test_nvlink_gauges_land_on_each_gpus_only_link():
    index = TelemetryIndex(parse_fabric((DATA / "nvidia_smi" / "nvidia-smi_topo_m_8xH100.txt").read_text(), source_name="host"))
    mapping = prometheus_mapping({}, preset="dcgm_nvlink")
    gpu = {"Hostname": "host", "gpu": "3", "UUID": "GPU-3", "device": "nvidia3", "modelName": "NVIDIA H100 80GB HBM3"}
    frame = rates_frame(index, mapping, {"tx_bytes": vector((gpu, 225e9)), "rx_bytes": vector((gpu, 45e9))}, window_s=10)
    top = {(record["from"], record["to"]): record["utilization"] for record in frame["top"]}
    assert top[("host/gpu3", "host/nvswitch")] == pytest.approx(0.5, abs=0.01) and top[("host/nvswitch", "host/gpu3")] == pytest.approx(0.1, abs=0.01)


def test_an_answer_that_is_not_a_vector_is_refused():
    index = TelemetryIndex(parse_fabric((DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt").read_text(), source_name="dump"))
    with pytest.raises(TelemetryError, match="not an instant vector"):
        rates_frame(index, prometheus_mapping({}, preset="node_exporter_infiniband"), {"tx_bytes": {"resultType": "matrix", "result": []}}, window_s=30)


def test_error_counters_become_per_link_totals_summed_over_both_ends():
    """What the diagnosis reads: cumulative counts per link, as a collector would post them;
    both ends of a cable count its errors, a series naming no port is left out. One answer
    carries every counter that is not zero; what grew since the previous poll is listed in the
    frame (a lower count is a reset, counted from zero; a counter missing from the answer is zero)."""
    index = TelemetryIndex(parse_fabric((DATA / "ib" / "ibnetdiscover_2leaf_1spine_8hca.txt").read_text(), source_name="dump"))
    mapping = prometheus_mapping({"node": "{node}", "port": "{port}"}, preset="node_exporter_infiniband")
    link = 14
    (a_node, a_port), (b_node, b_port) = index.port_names[link], index.port_names[link + index.layout.link_count]
    symbol, downed = {"__name__": "node_infiniband_symbol_error_total", "job": "ib"}, {"__name__": "node_infiniband_link_downed_total", "job": "ib"}
    a, b = {"node": a_node, "port": a_port}, {"node": b_node, "port": b_port}
    cache, counts = {}, {}
    first = error_counters(index, mapping, vector(({**symbol, **a}, 10), ({**symbol, **b}, 3), ({**downed, **a}, 6), t=1796000000.0 - 10), previous=counts, ports_of=cache)
    assert {counter.growth for counter in first} == {0.0}  # nothing to compare with yet
    answer = vector(({**symbol, **a}, 12), ({**symbol, **b}, 3), ({**symbol, "node": "nowhere", "port": "1"}, 99), ({**downed, **a}, 4))  # link_downed was reset
    counters = error_counters(index, mapping, answer, previous=counts, ports_of=cache)
    assert {(counter.name, counter.port, counter.growth) for counter in counters} == {("symbol_errors", link, 2), ("symbol_errors", link + index.layout.link_count, 0), ("link_downed", link, 4)}
    assert error_totals(index, counters) == [{"t_s": 1796000000.0, "link": link, "counters": {"link_downed": 4, "symbol_errors": 15}}]
    # The label sets without __name__: the same as rate()'s, so one resolution serves both queries.
    assert set(cache) == {(("job", "ib"), ("node", a_node), ("port", a_port)), (("job", "ib"), ("node", b_node), ("port", b_port)), (("job", "ib"), ("node", "nowhere"), ("port", "1"))}
    frame = rates_frame(index, mapping, {}, window_s=30, ports_of=cache, error_counters=counters)
    assert frame["telemetry"]["errors"] == [{"node": a_node, "port": a_port, "link": link, "counters": {"link_downed": 4, "symbol_errors": 2}}]
    error_counters(index, mapping, vector(({**symbol, **a}, 12)), previous=counts, ports_of=cache)  # the others are back to zero
    assert counts == {(link, "", "symbol_errors"): 12}


DCGM_TEXT = (DATA / "telemetry" / "dcgm-exporter_3.3_8xH100_nvlink.prom").read_text()


def dcgm_answer(mapping, key, **changes):
    """What Prometheus answers for the gauge (or gauge family) of `key` of `mapping.queries` over
    the recorded dcgm-exporter text: its samples, with their names (no function drops them)."""
    pattern = mapping.specs()[key].name_pattern()
    series = [
        ({"__name__": sample.name, **sample.labels, **changes}, sample.value)
        for family in text_string_to_metric_families(DCGM_TEXT) for sample in family.samples if re.fullmatch(pattern, sample.name)
    ]  # fmt: skip
    return vector(*series)


def test_per_link_nvlink_gauges_add_up_on_each_gpus_link_to_its_nvswitches():
    """dcgm-exporter's per-link fields (DCGM_FI_PROF_NVLINK_L0..L17_TX_BYTES) as one query per
    family; each series names its card by pci_bus_id (the NCCL XML's card ids) and its NVLink by
    the number in its name, and the 18 lanes of a GPU add up on its 18-lane link: GPU0's lane l
    sends (l + 1) GB/s, 171 GB/s of 18 x 25 GB/s; GPU3's lane 7 carries nothing."""
    index = TelemetryIndex(parse_fabric((DATA / "nccl_xml" / "nccl_topo_dump_8xH100.xml").read_text(), source_name="node01.xml"))
    mapping = prometheus_mapping({}, preset="dcgm_nvlink_links")
    assert mapping.queries(30) == {"tx_bytes": '{__name__=~"DCGM_FI_PROF_NVLINK_L[0-9]+_TX_BYTES"}', "rx_bytes": '{__name__=~"DCGM_FI_PROF_NVLINK_L[0-9]+_RX_BYTES"}'}
    assert mapping.errors_query() == (
        '{__name__=~"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L[0-9]+|DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L[0-9]+|DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_L[0-9]+"} > 0'
    )
    answers = {key: dcgm_answer(mapping, key) for key in mapping.queries(30)}
    assert len(answers["tx_bytes"]["result"]) == 8 * 18
    frame = rates_frame(index, mapping, answers, window_s=30)
    utilization = decode_frame(frame).utilization  # per link: the busier direction
    gpu0, gpu3 = (index.link(index.number[(card, "node01/nvswitch")]) for card in ("node01/gpu:0000:18:00.0", "node01/gpu:0000:5d:00.0"))
    assert utilization[gpu0] == pytest.approx(171 / 450, abs=1 / 255)  # it receives less, 18 x 5 GB/s
    assert utilization[gpu3] == pytest.approx(17 * 12.5 / 450, abs=1 / 255)
    report = frame["telemetry"]
    assert report["samples"] == 2 * 8 * 18 and report["unknown_ports"] == 0 and report["links_measured"] == 8

    # Another host's GPUs are not in this fabric: counted and named, one reason per GPU and lane.
    elsewhere = {key: dcgm_answer(mapping, key, Hostname="node02") for key in mapping.queries(30)}
    report = rates_frame(index, mapping, elsewhere, window_s=30)["telemetry"]
    assert report["unknown_ports"] == 8 * 18 and report["links_measured"] == 0
    assert report["unknown"][0] == "node02/gpu:0000:18:00.0 / node02/gpu0: no node of the fabric has this id, name or description"


def test_per_link_error_counters_grow_on_their_lane_and_add_up_on_the_link():
    index = TelemetryIndex(parse_fabric((DATA / "nccl_xml" / "nccl_topo_dump_8xH100.xml").read_text(), source_name="node01.xml"))
    mapping = prometheus_mapping({}, preset="dcgm_nvlink_links")
    gpu3 = {"gpu": "3", "UUID": "GPU-0d1e2f3a", "pci_bus_id": "00000000:5D:00.0", "device": "nvidia3", "Hostname": "node01"}
    crc, recovery = "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L{}", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_L{}"
    cache, counts = {}, {}
    error_counters(index, mapping, vector(({"__name__": crc.format(7), **gpu3}, 1523), ({"__name__": crc.format(2), **gpu3}, 10), t=1796000000.0 - 10), previous=counts, ports_of=cache)
    answer = vector(({"__name__": crc.format(7), **gpu3}, 1600), ({"__name__": crc.format(2), **gpu3}, 13), ({"__name__": recovery.format(7), **gpu3}, 3))
    counters = error_counters(index, mapping, answer, previous=counts, ports_of=cache)
    assert {(counter.name, counter.lane, counter.growth) for counter in counters} == {("nvlink_crc_flit_errors", "7", 77), ("nvlink_crc_flit_errors", "2", 3), ("nvlink_recovery_errors", "7", 0)}
    link = index.link(counters[0].port)
    assert error_totals(index, counters) == [{"t_s": 1796000000.0, "link": link, "counters": {"nvlink_crc_flit_errors": 1613, "nvlink_recovery_errors": 3}}]
    frame = rates_frame(index, mapping, {}, window_s=30, ports_of=cache, error_counters=counters)
    assert frame["telemetry"]["errors"] == [{"node": "node01/gpu:0000:5d:00.0", "port": "node01/nvswitch", "link": link, "counters": {"nvlink_crc_flit_errors": 80}, "lanes": ["2", "7"]}]


def test_a_series_with_a_link_label_is_a_lane_and_cards_without_bus_ids_are_found_by_gpu_index():
    """Exporters that put the link in a label (not the name) map with "lane": "{link}" on plain
    metrics; nvidia-smi's cards have no bus id, so the preset's second node template (host and
    GPU index) finds them."""
    index = TelemetryIndex(parse_fabric((DATA / "nvidia_smi" / "nvidia-smi_topo_m_8xH100.txt").read_text(), source_name="node01"))
    mapping = prometheus_mapping({"tx_bytes": {"metric": "DCGM_FI_PROF_NVLINK_TX_BYTES_PER_LINK", "type": "gauge"}, "rx_bytes": None}, preset="dcgm_nvlink_links")
    gpu = {"__name__": "DCGM_FI_PROF_NVLINK_TX_BYTES_PER_LINK", "gpu": "5", "pci_bus_id": "00000000:AB:00.0", "Hostname": "node01"}
    answer = vector(*[({**gpu, "link": str(lane)}, 25e9) for lane in range(9)], ({**gpu, "link": "3"}, 25e9))  # lane 3 twice: counted once
    frame = rates_frame(index, mapping, {"tx_bytes": answer}, window_s=30)
    assert decode_frame(frame).utilization[index.number[("node01/gpu5", "node01/nvswitch")]] == pytest.approx(0.5, abs=1 / 255)  # 9 lanes of 18 full


def test_a_family_of_byte_counters_is_refused():
    with pytest.raises(TelemetryError) as caught:
        prometheus_mapping({"tx_bytes": "DCGM_FI_DEV_NVLINK_BANDWIDTH_L{link}", "node": ["{Hostname}/gpu{gpu}", "{gpu!r}"]}, preset="dcgm_nvlink_links")
    assert caught.value.problems[0].startswith("tx_bytes: 'DCGM_FI_DEV_NVLINK_BANDWIDTH_L{link}' is a family of counters; rate() drops the metric name")
    assert caught.value.problems[1] == "node: '{gpu!r}'; expected label names in braces, such as {device}"
    with pytest.raises(TelemetryError, match="with {link} where a family names the link"):
        prometheus_mapping({"tx_bytes": "A_L{link}_B{link}"}, preset="dcgm_nvlink_links")


def test_an_nvlink_the_model_lacks_is_reported_with_the_reason():
    """A lane beyond the link's NVLinks, and a card of Azure's ND H100 v5 hint file (NCCL_TOPO_FILE
    lists PCI only; NCCL learns the NVLinks from NVML), name no port, and say why."""
    index = TelemetryIndex(parse_fabric((DATA / "nccl_xml" / "nccl_topo_dump_8xH100.xml").read_text(), source_name="node01.xml"))
    mapping = prometheus_mapping({}, preset="dcgm_nvlink_links")
    gpu0 = {"__name__": "DCGM_FI_PROF_NVLINK_L18_TX_BYTES", "gpu": "0", "pci_bus_id": "00000000:18:00.0", "Hostname": "node01"}
    report = rates_frame(index, mapping, {"tx_bytes": vector((gpu0, 1e9))}, window_s=30)["telemetry"]
    assert report["unknown"] == ["node01/gpu:0000:18:00.0: NVLink 18, but its link to node01/nvswitch has 18 NVLinks (0..17)"]

    azure = TelemetryIndex(parse_fabric((DATA / "nccl_xml" / "azure-ndv5-topo.xml").read_text(), source_name="vm01.xml"))
    gpu = {"__name__": "DCGM_FI_PROF_NVLINK_L0_TX_BYTES", "gpu": "0", "pci_bus_id": "00000001:00:00.0", "Hostname": "vm01"}
    report = rates_frame(azure, mapping, {"tx_bytes": vector((gpu, 1e9))}, window_s=30)["telemetry"]
    assert report["unknown"] == ["vm01/gpu:0001:00:00.0: no link to a switch in the fabric (are its NVLinks in the uploaded topology?)"]


def test_the_labels_that_name_a_port_are_shown_with_it():
    index = TelemetryIndex(parse_fabric((DATA / "nccl_xml" / "nccl_topo_dump_8xH100.xml").read_text(), source_name="node01.xml"))
    mapping = prometheus_mapping({}, preset="dcgm_nvlink_links")
    gpu = {"__name__": "DCGM_FI_PROF_NVLINK_L4_TX_BYTES", "gpu": "1", "UUID": "GPU-7a2b", "pci_bus_id": "00000000:2A:00.0", "device": "nvidia1", "Hostname": "node01", "instance": "node01:9400"}
    elsewhere = {**gpu, "Hostname": "node02"}
    assert series_ports(index, mapping, "tx_bytes", vector((elsewhere, 1e9), (gpu, 1e9))) == [
        {"series": '{Hostname="node01", pci_bus_id="00000000:2A:00.0", gpu="1", link="4"}', "node": "node01/gpu:0000:2a:00.0", "port": "node01/nvswitch", "lane": "4"}
    ]
