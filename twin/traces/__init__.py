"""Pure trace inputs for traffic replays: text or a parallelism spec in, a ``Trace`` out.

One module per input: ``ourformat`` (the twin's own JSON-lines and CSV
format), ``nccl_log`` (NCCL debug logs), ``nccl_tests`` (nccl-tests output, as
``Measurement``s and replayable sweeps) and ``training`` (a generated training
step). Bad files raise ``twin.ingest.IngestError`` with file and line.
"""

from twin.traces.errors import TraceError
from twin.traces.model import (
    DTYPE_SIZES,
    OPERATIONS,
    CollectiveEvent,
    Event,
    FlowEvent,
    Measurement,
    MeasurementRow,
    MeasuredTiming,
    RankBinding,
    Trace,
    gpu_card_id,
    measurement_from_dict,
    measurement_to_dict,
    trace_from_dict,
    trace_to_dict,
)
from twin.traces.nccl_log import detect_nccl_log, parse_nccl_log
from twin.traces.nccl_tests import detect_nccl_tests, measurement_trace, parse_nccl_tests
from twin.traces.ourformat import (
    detect_trace_csv,
    detect_trace_jsonl,
    export_trace_csv,
    export_trace_jsonl,
    parse_trace_csv,
    parse_trace_jsonl,
)
from twin.traces.training import training_step, training_step_problems

__all__ = [
    "DTYPE_SIZES",
    "OPERATIONS",
    "CollectiveEvent",
    "Event",
    "FlowEvent",
    "Measurement",
    "MeasurementRow",
    "MeasuredTiming",
    "RankBinding",
    "Trace",
    "TraceError",
    "detect_nccl_log",
    "detect_nccl_tests",
    "detect_trace_csv",
    "detect_trace_jsonl",
    "export_trace_csv",
    "export_trace_jsonl",
    "gpu_card_id",
    "measurement_from_dict",
    "measurement_to_dict",
    "measurement_trace",
    "parse_nccl_log",
    "parse_nccl_tests",
    "parse_trace_csv",
    "parse_trace_jsonl",
    "trace_from_dict",
    "trace_to_dict",
    "training_step",
    "training_step_problems",
]
