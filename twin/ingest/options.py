"""Options a user can set at upload, passed to every parser and to the completion step."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from twin.simcore.translation import LATER, Phrase

__all__ = ["DEFAULT_NON_COMPUTE_PATTERN", "SCALE_UP_RULES", "ParseOptions", "pattern_problem"]

# Host names and descriptions of HCAs that carry no GPU traffic: storage servers and
# appliances, the fabric's management (UFM, subnet manager) and login nodes.
DEFAULT_NON_COMPUTE_PATTERN = r"(?i)(?<![a-z])(stor(age)?|nfs|lustre|gpfs|weka|vast|ddn|ufm|mgmt|mgt|login)"
# "auto": a host whose GPUs have no NVLink among them gets its generation's NVSwitch;
# "none": leave hosts as the files describe them.
SCALE_UP_RULES = ("auto", "none")


@dataclass(frozen=True)
class ParseOptions:
    """How to read a file, and how to complete what it leaves out.

    ``default_bandwidth_gbps`` and ``default_latency_ns`` fill in links of
    formats that carry no such figure (Slurm topology.conf, nvidia-smi topo);
    ``None`` means the parser's own documented default. ``max_problems`` is
    how many problems a parser gathers before it gives up on a file.

    The rest is for ``twin.ingest.completion``: HCAs whose host name or
    description matches ``non_compute_hca_pattern`` (a regular expression;
    empty for none) stand for no card; with ``compute_hcas_per_host`` only
    the first N HCAs of a host do; ``scale_up`` is one of ``SCALE_UP_RULES``
    and ``nvlink_gbps`` overrides the NVLink bandwidth per GPU it completes.
    """

    default_bandwidth_gbps: float | None = None
    default_latency_ns: float | None = None
    max_problems: int = 50
    non_compute_hca_pattern: str = DEFAULT_NON_COMPUTE_PATTERN
    compute_hcas_per_host: int | None = None
    scale_up: str = "auto"
    nvlink_gbps: float | None = None

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ParseOptions:
        """Options from an upload form's, the API's or the command line's values: the fields
        given and not None; the others keep their defaults."""
        names = {field.name for field in fields(cls)}
        return cls(**{name: value for name, value in values.items() if name in names and value is not None})


def pattern_problem(pattern: str) -> Phrase | None:
    """Why ``pattern`` is not a usable regular expression (words; Python's own reason stays
    English), or None."""
    try:
        re.compile(pattern)
    except re.error as error:
        return LATER.gettext("not a regular expression: %(error)s") % {"error": str(error)}
    return None
