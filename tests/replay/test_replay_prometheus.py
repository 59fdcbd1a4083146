"""Prometheus answers into telemetry frames: the label mapping, its checks, and the frame."""
from pathlib import Path

import pytest

from twin.ingest.registry import parse_fabric
from twin.replay import TelemetryError, decode_frame
from twin.replay.prometheus import error_counters, error_totals, prometheus_mapping, rates_frame
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
        "colour: unknown key; expected one of errors, node, nodes, port, rx_bytes, selector, tx_bytes, xmit_wait, xmit_wait_bytes",
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
    assert counts == {(link, "symbol_errors"): 12}
