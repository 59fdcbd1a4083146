"""Host names: Slurm hostlist expansion, and the short form that host node ids use.

Slurm writes sets of hosts as *hostlists*: ``node[001-128]``, ``node0[5-8]``,
``gpu-r04-n[01-02],gpu-r04-n04,gpu-spare1``, ``rack[1-4]_n[01-08]``. The
grammar follows ``src/common/hostlist.c`` of Slurm:

- items are separated by commas outside brackets;
- a bracket holds comma-separated numbers ``N`` or ranges ``N-M``;
- the width of the lower bound sets the zero padding: ``[08-10]`` gives
  ``08 09 10``, ``[8-10]`` gives ``8 9 10``;
- an item may hold several brackets; the first one varies slowest.

Host identity across formats (Slurm NodeNames, LLDP system names, cabling
plans, file names) uses the short, lower-case name: ``Node01.cluster.local``
is the host ``node01``, whose node id is ``host:node01``.
"""

from __future__ import annotations

import re
from itertools import product

from twin.simcore.translation import LATER, Phrase

__all__ = [
    "DEFAULT_HOST",
    "MAX_HOSTLIST_SIZE",
    "HostlistError",
    "expand_hostlist",
    "host_from_source_name",
    "host_node_id",
    "short_host_name",
    "source_host",
]

# The host of a single-host capture whose file name names none.
DEFAULT_HOST = "host"
# Enough for any real cluster; stops "node[0-999999999]" from eating the memory.
MAX_HOSTLIST_SIZE = 65_536

_RANGE = re.compile(r"(\d+)(?:-(\d+))?")
# A host-name label (RFC 1123) that starts with a letter and ends with a digit:
# "node01", "gpu-r03-n01", "srv1101"; not "8xH100", "topo", "nvidia-smi".
_NUMBERED_HOST = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,61}[0-9]")


class HostlistError(ValueError):
    """A hostlist that Slurm would not accept; the message says what and where."""


def expand_hostlist(hostlist: str) -> tuple[str, ...]:
    """Every host name of a Slurm hostlist, in Slurm's order (duplicates kept).

    >>> expand_hostlist("node[01-03],gpu-spare1")
    ('node01', 'node02', 'node03', 'gpu-spare1')
    >>> expand_hostlist("node0[5-6]")
    ('node05', 'node06')
    >>> expand_hostlist("r[1-2]n[1,3]")
    ('r1n1', 'r1n3', 'r2n1', 'r2n3')

    Raises ``HostlistError`` for a malformed list or one of more than
    ``MAX_HOSTLIST_SIZE`` hosts.
    """
    text = hostlist.strip()
    if not text:
        raise HostlistError(LATER.gettext("empty hostlist"))
    if any(character.isspace() for character in text):
        raise HostlistError(LATER.gettext("whitespace inside hostlist %(hostlist)s") % {"hostlist": repr(text)})
    hosts: list[str] = []
    for item in _split_items(text):
        if item:  # Slurm ignores empty items ("a,,b", a trailing comma)
            hosts.extend(_expand_item(item))
            if len(hosts) > MAX_HOSTLIST_SIZE:
                raise HostlistError(LATER.gettext("hostlist %(hostlist)s names more than %(limit)s hosts") % {"hostlist": repr(text), "limit": MAX_HOSTLIST_SIZE})
    if not hosts:
        raise HostlistError(LATER.gettext("hostlist %(hostlist)s names no host") % {"hostlist": repr(text)})
    return tuple(hosts)


def _split_items(text: str) -> list[str]:
    """Split on commas outside brackets, checking that brackets pair up and do not nest."""
    items, start, open_at = [], 0, None
    for position, character in enumerate(text):
        if character == "[":
            if open_at is not None:
                raise HostlistError(LATER.gettext("nested '[' at character %(position)s of %(hostlist)s") % {"position": position + 1, "hostlist": repr(text)})
            open_at = position
        elif character == "]":
            if open_at is None:
                raise HostlistError(LATER.gettext("']' without '[' at character %(position)s of %(hostlist)s") % {"position": position + 1, "hostlist": repr(text)})
            open_at = None
        elif character == "," and open_at is None:
            items.append(text[start:position])
            start = position + 1
    if open_at is not None:
        raise HostlistError(LATER.gettext("'[' at character %(position)s of %(hostlist)s is never closed") % {"position": open_at + 1, "hostlist": repr(text)})
    items.append(text[start:])
    return items


def _expand_item(item: str) -> list[str]:
    # "rack[1-2]_n[01-02]" splits into ["rack", "1-2", "_n", "01-02", ""].
    parts = re.split(r"\[([^\]]*)\]", item)
    literals, brackets = parts[0::2], parts[1::2]
    choices = [_expand_bracket(bracket, item) for bracket in brackets]
    size = 1
    for values in choices:
        size *= len(values)
    if size > MAX_HOSTLIST_SIZE:
        raise HostlistError(LATER.gettext("%(item)s names more than %(limit)s hosts") % {"item": repr(item), "limit": MAX_HOSTLIST_SIZE})
    return [
        "".join(literal + value for literal, value in zip(literals, (*values, "")))
        for values in product(*choices)
    ]


def _expand_bracket(bracket: str, item: str) -> list[str]:
    values: list[str] = []
    for term in bracket.split(","):
        match = _RANGE.fullmatch(term)
        if match is None:
            raise HostlistError(
                LATER.gettext("bad range %(range)s in %(item)s: expected N or N-M with digits, e.g. [001-128] or [1,3,5-8]") % {"range": repr(term), "item": repr(item)}
            )
        low_text, high_text = match.group(1), match.group(2) or match.group(1)
        low, high = int(low_text), int(high_text)
        if low > high:
            raise HostlistError(LATER.gettext("range %(range)s in %(item)s runs backwards") % {"range": repr(term), "item": repr(item)})
        if high - low + 1 > MAX_HOSTLIST_SIZE:
            raise HostlistError(LATER.gettext("range %(range)s in %(item)s names more than %(limit)s hosts") % {"range": repr(term), "item": repr(item), "limit": MAX_HOSTLIST_SIZE})
        width = len(low_text)  # Slurm pads to the width of the lower bound
        values.extend(f"{number:0{width}d}" for number in range(low, high + 1))
    return values


def short_host_name(name: str) -> str:
    """The host part of a name, lower case, without the DNS domain.

    >>> short_host_name(" Node01.cluster.local ")
    'node01'
    """
    return name.strip().lower().split(".", 1)[0]


def host_node_id(name: str) -> str:
    """The node id of a host: ``host:<short name>``.

    >>> host_node_id("GPU-R03-N01")
    'host:gpu-r03-n01'
    """
    return f"host:{short_host_name(name)}"


def host_from_source_name(source_name: str) -> str | None:
    """The host an upload describes, when its name says so, else ``None``.

    Single-host captures (NCCL XML, ``nvidia-smi topo -m``, ``lldpctl``) rarely
    name their host; the file usually does. The file name is cut at the first
    dot and at underscores (which host names cannot hold), the names of the
    capturing tools (``nvsmi``, ``nvidia-smi``, ``nccl``, ``lldpctl``) are
    dropped from either end of a hyphenated piece, and the last piece that
    looks like a numbered host name (starts with a letter, ends with a digit)
    is taken:

    >>> [host_from_source_name(name) for name in ("node01.xml", "lldpctl_json_node01.json",
    ...     "/tmp/gpu-r03-n07.cluster.topo.txt", "node01-nvsmi.txt", "nccl_topo_dump_8xH100.xml", "topo.xml")]
    ['node01', 'node01', 'gpu-r03-n07', 'node01', None, None]

    A member of an uploaded archive is named ``<archive>/<member path>``
    (``twin.ingest.archive``). When its file name names no host, the
    directories inside the archive are tried, innermost first, so that
    per-host directories work as ops collect them:

    >>> host_from_source_name("nodes.tgz/topo/node01/nccl_topo.xml")
    'node01'

    The archive itself (a ``.tar``, ``.tar.gz``, ``.tgz`` or ``.zip``
    component) and the directories around it are never taken for a host.
    """
    parts = [part for part in source_name.replace("\\", "/").split("/") if part]
    if not parts:
        return None
    host = _host_in_name(parts[-1])
    if host is not None:
        return host
    archives = [index for index, part in enumerate(parts[:-1]) if _ARCHIVE_NAME.search(part)]
    if not archives:
        return None  # a plain file: only its own name counts (not /home/user2/ or uploads/)
    directories = parts[archives[-1] + 1 : -1]
    return next((host for part in reversed(directories) if (host := _host_in_name(part)) is not None), None)


# A path component that is an uploaded archive (twin.ingest.archive names members after it).
_ARCHIVE_NAME = re.compile(r"\.(?:tar|tar\.gz|tgz|zip)$", re.IGNORECASE)
# Tool names that ops put next to the host in a capture's name: node01-nvsmi.txt, nccl-node01.xml.
# Not "topo": azure-ndv4-topo.xml names a VM size, not a host, and node01_topo.xml already works.
_TOOL_WORDS = frozenset({"nvsmi", "nvidia", "smi", "nccl", "lldp", "lldpctl"})


def _host_in_name(name: str) -> str | None:
    """The host named by one file or directory name (see ``host_from_source_name``), else ``None``."""
    stem = name.split(".", 1)[0]
    for piece in reversed(stem.split("_")):
        words = piece.split("-")
        while words and words[0].lower() in _TOOL_WORDS:
            words.pop(0)
        while words and words[-1].lower() in _TOOL_WORDS:
            words.pop()
        candidate = "-".join(words)
        if _NUMBERED_HOST.fullmatch(candidate):
            return short_host_name(candidate)
    return None


def source_host(source_name: str) -> tuple[str, Phrase | None]:
    """The host a single-host capture describes, and a warning when only ``DEFAULT_HOST`` is left.

    >>> source_host("node07.xml")
    ('node07', None)
    >>> source_host("dump.xml")[0]
    'host'
    """
    host = host_from_source_name(source_name)
    if host is not None:
        return host, None
    return DEFAULT_HOST, LATER.gettext(
        "the file name %(name)s names no host, so its nodes are named after %(host)s; name the file after the host (node01.xml, "
        "node01.topo.txt) or, in an archive, put it in a directory named after the host (node01/topo.xml) to keep hosts apart"
    ) % {"name": repr(source_name), "host": repr(DEFAULT_HOST)}
