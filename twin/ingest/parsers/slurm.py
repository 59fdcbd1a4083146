"""Slurm ``topology.conf``: the tree, block and ring plugins' network description.

Grammar (``man 5 topology.conf``; docs/formats/slurm-topology.md): one
statement a line, ``Key=Value`` pairs separated by blanks, keys in any case,
``#`` to the end of the line is a comment, a trailing ``\\`` continues the
line::

    SwitchName=leaf01 Nodes=node[01-04] LinkSpeed=400
    SwitchName=spine01 Switches=leaf[01-02]
    BlockName=nvl01 Nodes=node[01-04]
    BlockSizes=4,8,16
    RingName=ring1 Nodes=node[01-08]

Mapping: every switch becomes a switch node (tier from its height in the
tree: leaf, spine, then core), every Slurm node a host node; ``Nodes=`` and
``Switches=`` become scale-out links. Slurm knows no ports or speeds, so each
end's port is named after the node at the other end, and links carry
``ParseOptions`` defaults. Blocks and rings are groupings, not cables: they
go into host and fabric attributes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from twin.simcore.translation import LATER, Joined, gettext_noop
from twin.ingest.errors import ProblemCollector
from twin.ingest.hostlist import HostlistError, expand_hostlist, host_node_id
from twin.ingest.options import ParseOptions
from twin.ingest.registry import Parser, register_parser
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

__all__ = [
    "DEFAULT_LATENCY_NS",
    "DEFAULT_LINK_GBPS",
    "FORMAT_NAME",
    "SlurmTopologyParser",
]

FORMAT_NAME = "slurm-topology"
# An NDR InfiniBand / 400GbE port, the usual AI-fabric port today.
DEFAULT_LINK_GBPS = 400.0
# About 2 m of cable at 5 ns/m.
DEFAULT_LATENCY_NS = 10.0

MAX_NAME_LENGTH = 64  # Slurm's limit for switch, block and ring names
MAX_RING_SIZE = 16
_TIERS_BY_HEIGHT = ("leaf", "spine", "core")

_STATEMENT = re.compile(r"(?im)^[ \t]*(?:SwitchName|BlockName|BlockSizes|RingName)[ \t]*=")
# Statement keyword -> the other keys it accepts (lower case).
_KEYS = {
    "switchname": ("switches", "nodes", "linkspeed"),
    "blockname": ("nodes",),
    "blocksizes": (),
    "ringname": ("nodes",),
}
_HOSTLIST_EXPECTED = LATER.gettext("a Slurm hostlist such as node[001-128] or leaf01,leaf02")
# The kinds of named statement: each sentence about one, written out (a word spliced into a
# sentence would not translate).
_EMPTY_NAME = {"switch": LATER.gettext("empty switch name"), "block": LATER.gettext("empty block name"), "ring": LATER.gettext("empty ring name")}
_A_NAME = {"switch": LATER.gettext("a switch name"), "block": LATER.gettext("a block name"), "ring": LATER.gettext("a ring name")}
_LONG_NAME = {
    "switch": LATER.gettext("switch name %(name)s... is %(length)s characters long"),
    "block": LATER.gettext("block name %(name)s... is %(length)s characters long"),
    "ring": LATER.gettext("ring name %(name)s... is %(length)s characters long"),
}
_DEFINED_TWICE = {
    "switch": LATER.gettext("switch %(name)s is already defined on line %(line)s"),
    "block": LATER.gettext("block %(name)s is already defined on line %(line)s"),
    "ring": LATER.gettext("ring %(name)s is already defined on line %(line)s"),
}
_UNIQUE_NAMES = {"switch": LATER.gettext("unique switch names"), "block": LATER.gettext("unique block names"), "ring": LATER.gettext("unique ring names")}
_WITHOUT_NODES = {"block": LATER.gettext("block without Nodes="), "ring": LATER.gettext("ring without Nodes=")}
_ALREADY_IN = {
    "block": LATER.gettext("node %(node)s is already in block %(group)s"),
    "ring": LATER.gettext("node %(node)s is already in ring %(group)s"),
}
_AT_MOST_ONE = {"block": LATER.gettext("each node in at most one block"), "ring": LATER.gettext("each node in at most one ring")}



@dataclass(frozen=True)
class _Statement:
    """One logical line: its keyword (lower case), values by lower-case key, first raw line."""

    line: int
    keyword: str
    values: dict[str, str]


@dataclass(frozen=True)
class _Group:
    """A block or a ring: a named, ordered set of hosts."""

    name: str
    line: int
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class _Switch:
    id: str
    name: str
    line: int
    nodes: tuple[str, ...]
    switches: tuple[str, ...]
    link_speed: int | None


@register_parser
class SlurmTopologyParser(Parser):
    """Reads ``topology.conf`` of the topology/tree, topology/block and topology/ring plugins."""

    name = FORMAT_NAME
    label = gettext_noop("Slurm topology.conf")
    extensions = (".conf",)

    def detect(self, text: str) -> bool:
        return _STATEMENT.search(text) is not None

    def parse(self, text: str, *, source_name: str, options: ParseOptions = ParseOptions()) -> FabricSpec:
        problems = ProblemCollector(source_name, limit=options.max_problems)
        reader = _Reader(problems)
        for statement in _statements(text, problems):
            reader.read(statement)
        if not (reader.switches or reader.blocks or reader.rings):
            problems.add(
                LATER.gettext("no SwitchName, BlockName or RingName statement"),
                expected=LATER.gettext("a Slurm topology.conf (SwitchName=... Nodes=..., or BlockName=... Nodes=...)"),
            )
        heights = _switch_heights(reader.switches, problems)
        problems.raise_if_any()
        return reader.fabric(source_name, heights, options)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first raw line number, text without comment) of each logical line; ``\\`` continues a line."""
    pending, pending_line = "", 0
    for number, raw in enumerate(text.split("\n"), start=1):
        content = raw.rstrip("\r").split("#", 1)[0].rstrip()
        if not pending:
            pending_line = number
        if content.endswith("\\"):
            pending += content[:-1] + " "
            continue
        yield pending_line, pending + content
        pending = ""
    if pending:
        yield pending_line, pending


def _statements(text: str, problems: ProblemCollector) -> Iterator[_Statement]:
    for line, content in _logical_lines(text):
        tokens = content.split()
        if not tokens:
            continue
        values: dict[str, str] = {}
        keyword = None
        for token in tokens:
            key, equals, value = token.partition("=")
            key = key.lower()
            if not equals or not key:
                problems.add(
                    LATER.gettext("%(token)s is not a Key=Value pair") % {"token": repr(token)}, line=line, expected=LATER.gettext("Key=Value, e.g. Nodes=node[01-04]"),
                )
                break
            if keyword is None:
                if key not in _KEYS:
                    problems.add(
                        LATER.gettext("unknown statement %(key)s") % {"key": repr(token.partition("=")[0])},
                        line=line,
                        expected=LATER.gettext("a line starting with SwitchName=, BlockName=, BlockSizes= or RingName="),
                    )
                    break
                keyword = key
            elif key not in _KEYS[keyword]:
                allowed = Joined([f"{name}=" for name in _KEYS[keyword]], ", ") if _KEYS[keyword] else LATER.gettext("nothing else")
                problems.add(
                    LATER.gettext("unknown key %(key)s on a %(statement)s line") % {"key": repr(token.partition("=")[0]), "statement": keyword},
                    line=line,
                    expected=allowed,
                )
                break
            if key in values:
                problems.add(LATER.gettext("%(key)s given twice") % {"key": token.partition("=")[0]}, line=line, expected=LATER.gettext("each key once a line"))
                break
            values[key] = value
        else:
            yield _Statement(line, keyword, values)


class _Reader:
    """Collects switches, blocks and rings statement by statement, checking each as it comes."""

    def __init__(self, problems: ProblemCollector) -> None:
        self.problems = problems
        self.switches: dict[str, _Switch] = {}
        # Switches, blocks and rings by lower-case name (Slurm compares names that way here).
        self.blocks: dict[str, _Group] = {}
        self.rings: dict[str, _Group] = {}
        self.block_sizes: tuple[int, ...] = ()
        self.block_sizes_line: int | None = None
        self.host_names: dict[str, str] = {}  # host id -> name as first written
        self.block_of_host: dict[str, str] = {}
        self.ring_of_host: dict[str, str] = {}

    def read(self, statement: _Statement) -> None:
        getattr(self, f"_read_{statement.keyword}")(statement)

    def _name(self, statement: _Statement, seen: dict[str, _Switch] | dict[str, _Group]) -> str | None:
        """The statement's own name if valid and new."""
        name = statement.values[statement.keyword]
        what = statement.keyword.removesuffix("name")
        if not name:
            self.problems.add(_EMPTY_NAME[what], line=statement.line, expected=_A_NAME[what])
        elif len(name) > MAX_NAME_LENGTH:
            self.problems.add(
                _LONG_NAME[what] % {"name": repr(name[:20]), "length": len(name)},
                line=statement.line,
                expected=LATER.gettext("at most %(count)s characters") % {"count": MAX_NAME_LENGTH},
            )
        elif name.lower() in seen:
            self.problems.add(
                _DEFINED_TWICE[what] % {"name": repr(name), "line": str(seen[name.lower()].line)},
                line=statement.line,
                expected=_UNIQUE_NAMES[what],
            )
        else:
            return name
        return None

    def _hostlist(self, statement: _Statement, key: str) -> tuple[str, ...]:
        if key not in statement.values:
            return ()
        try:
            names = expand_hostlist(statement.values[key])
        except HostlistError as error:
            self.problems.add(
                LATER.gettext("%(key)s=: %(problem)s") % {"key": key.capitalize(), "problem": error.args[0]}, line=statement.line, expected=_HOSTLIST_EXPECTED,
            )
            return ()
        return tuple(dict.fromkeys(names))  # a name listed twice is one child

    def _hosts(self, statement: _Statement) -> tuple[str, ...]:
        """Host ids of ``Nodes=``, remembering each host's name as first written."""
        ids = []
        for name in self._hostlist(statement, "nodes"):
            host_id = host_node_id(name)
            self.host_names.setdefault(host_id, name)
            ids.append(host_id)
        return tuple(dict.fromkeys(ids))

    def _read_switchname(self, statement: _Statement) -> None:
        name = self._name(statement, self.switches)
        values = statement.values
        if "nodes" in values and "switches" in values:
            self.problems.add(
                LATER.gettext("a switch line with both Nodes= and Switches="),
                line=statement.line,
                expected=LATER.gettext("Nodes= (a leaf switch) or Switches= (a switch above other switches), not both"),
            )
            return
        link_speed = values.get("linkspeed")
        if link_speed is not None and not link_speed.isdigit():
            self.problems.add(f"LinkSpeed={link_speed!r}", line=statement.line, expected=LATER.gettext("an unsigned integer"))
            link_speed = None
        hosts = self._hosts(statement)
        children = tuple(dict.fromkeys(child.strip().lower() for child in self._hostlist(statement, "switches")))
        if name is not None:
            switch_id = name.strip().lower()
            self.switches[switch_id] = _Switch(
                switch_id, name, statement.line, hosts, children, None if link_speed is None else int(link_speed)
            )

    def _read_blockname(self, statement: _Statement) -> None:
        self._read_group(statement, self.blocks, self.block_of_host, "block")

    def _read_ringname(self, statement: _Statement) -> None:
        self._read_group(statement, self.rings, self.ring_of_host, "ring")

    def _read_group(
        self, statement: _Statement, groups: dict[str, _Group], group_of_host: dict[str, str], what: str
    ) -> None:
        name = self._name(statement, groups)
        if "nodes" not in statement.values:
            expected = f"{what.capitalize()}Name=<name> Nodes=<hostlist>"
            self.problems.add(_WITHOUT_NODES[what], line=statement.line, expected=expected)
            return
        hosts = self._hosts(statement)
        if what == "ring" and len(hosts) > MAX_RING_SIZE:
            self.problems.add(
                LATER.ngettext("ring of %(count)s node", "ring of %(count)s nodes", len(hosts)) % {"count": len(hosts)},
                line=statement.line,
                expected=LATER.gettext("at most %(count)s nodes a ring") % {"count": MAX_RING_SIZE},
            )
        if name is None:
            return
        for host in hosts:
            if host in group_of_host:
                self.problems.add(
                    _ALREADY_IN[what] % {"node": repr(self.host_names[host]), "group": repr(group_of_host[host])},
                    line=statement.line,
                    expected=_AT_MOST_ONE[what],
                )
            else:
                group_of_host[host] = name
        groups[name.lower()] = _Group(name, statement.line, hosts)

    def _read_blocksizes(self, statement: _Statement) -> None:
        if self.block_sizes_line is not None:
            self.problems.add(
                LATER.gettext("BlockSizes already given on line %(line)s") % {"line": str(self.block_sizes_line)},
                line=statement.line,
                expected=LATER.gettext("one BlockSizes line"),
            )
            return
        self.block_sizes_line = statement.line
        terms = statement.values["blocksizes"].split(",")
        if not all(term.isdigit() and int(term) > 0 for term in terms):
            self.problems.add(
                f"BlockSizes={statement.values['blocksizes']!r}",
                line=statement.line,
                expected=LATER.gettext("positive integers separated by commas, e.g. BlockSizes=4,8,16"),
            )
            return
        sizes = tuple(int(term) for term in terms)
        base = sizes[0]
        for previous, size in zip(sizes, sizes[1:]):
            ratio, remainder = divmod(size, base)
            if size <= previous or remainder or ratio & (ratio - 1):
                self.problems.add(
                    LATER.gettext("block size %(size)s after %(previous)s") % {"size": size, "previous": previous},
                    line=statement.line,
                    expected=LATER.gettext("increasing sizes, each the first (%(first)s) times a power of two") % {"first": base},
                )
                return
        self.block_sizes = sizes

    def fabric(self, source_name: str, heights: dict[str, int], options: ParseOptions) -> FabricSpec:
        bandwidth = DEFAULT_LINK_GBPS if options.default_bandwidth_gbps is None else options.default_bandwidth_gbps
        latency = DEFAULT_LATENCY_NS if options.default_latency_ns is None else options.default_latency_ns
        nodes = [
            NodeSpec(
                switch.id,
                "switch",
                switch.name,
                tier=_TIERS_BY_HEIGHT[min(heights[switch.id], len(_TIERS_BY_HEIGHT) - 1)],
                attrs={"level": heights[switch.id] + 1}
                | ({} if switch.link_speed is None else {"link_speed": switch.link_speed}),
            )
            for switch in self.switches.values()
        ]
        for host_id, name in self.host_names.items():
            attrs = {}
            if host_id in self.block_of_host:
                attrs["block"] = self.block_of_host[host_id]
            if host_id in self.ring_of_host:
                attrs["ring"] = self.ring_of_host[host_id]
            nodes.append(NodeSpec(host_id, "host", name, attrs=attrs))

        def cable(parent: str, child: str) -> LinkSpec:
            return LinkSpec(parent, child, child, parent, bandwidth, latency, domain="scale-out")

        links = [
            cable(switch.id, child)
            for switch in self.switches.values()
            for child in (*switch.switches, *switch.nodes)
        ]
        attrs: dict = {}
        if self.blocks:
            attrs["blocks"] = {block.name: list(block.hosts) for block in self.blocks.values()}
        if self.block_sizes:
            attrs["block_sizes"] = list(self.block_sizes)
        if self.rings:
            attrs["rings"] = {ring.name: list(ring.hosts) for ring in self.rings.values()}
        return FabricSpec(source_name, tuple(nodes), tuple(links), attrs)


def _switch_heights(switches: dict[str, _Switch], problems: ProblemCollector) -> dict[str, int]:
    """Height of each switch above the hosts (0 for a leaf), reporting unknown children and cycles."""
    children: dict[str, list[str]] = {}
    for switch in switches.values():
        children[switch.id] = []
        for child in switch.switches:
            if child in switches:
                children[switch.id].append(child)
            else:
                problems.add(
                    LATER.gettext("switch %(switch)s lists unknown switch %(child)s") % {"switch": repr(switch.name), "child": repr(child)},
                    line=switch.line,
                    expected=LATER.gettext("Switches= naming switches defined by their own SwitchName= line"),
                )
    heights: dict[str, int] = {}
    # Depth-first without recursion: a file may chain thousands of switches.
    for root in switches:
        if root in heights:
            continue
        path, on_path, pending = [root], {root}, [iter(children[root])]
        while pending:
            child = next(pending[-1], None)
            if child is None:
                finished = path.pop()
                on_path.discard(finished)
                pending.pop()
                heights[finished] = 1 + max((heights.get(c, -1) for c in children[finished]), default=-1)
            elif child in on_path:
                cycle = " -> ".join(switches[name].name for name in (*path[path.index(child):], child))
                problems.add(
                    LATER.gettext("switches form a cycle (%(cycle)s): not a tree") % {"cycle": cycle},
                    line=switches[child].line,
                    expected=LATER.gettext("Switches= naming only switches below this one"),
                )
            elif child not in heights:
                path.append(child)
                on_path.add(child)
                pending.append(iter(children[child]))
    return heights
