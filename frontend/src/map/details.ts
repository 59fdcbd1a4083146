// The details panel: a node's kind, tier, host and ports (peer, speed,
// state, counters), from the node endpoint or, without one, from the layout;
// or a picked link's ends, cables and state.

import { element } from "../core/dom";
import { finite, isRecord, text } from "../core/json";
import type { NumberFormatters } from "../core/format";
import type { Translate } from "../core/i18n";
import type { LinkSummary } from "./linkSelection";
import { kindLabel, tierLabel } from "./labels";
import type { MapModel } from "./model";
import { SEVERITY_STATES } from "./model";

export interface PortDetails {
  readonly port: string;
  readonly peer: string | null;
  readonly peer_name: string | null;
  readonly peer_port: string | null;
  readonly bandwidth_gbps: number | null;
  readonly state: string;
  readonly domain: string;
  readonly attrs: Readonly<Record<string, unknown>>;
}

export interface NodeDetails {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly tier: string | null;
  readonly radix: number | null;
  readonly host: string | null;
  readonly attrs: Readonly<Record<string, unknown>>;
  readonly ports: readonly PortDetails[];
}

const obj = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});

export function parseNodeDetails(value: unknown): NodeDetails {
  const body = obj(value);
  const ports = Array.isArray(body["ports"]) ? (body["ports"] as unknown[]) : [];
  return {
    id: text(body["id"]) ?? "",
    name: text(body["name"]) ?? text(body["id"]) ?? "",
    kind: text(body["kind"]) ?? "",
    tier: text(body["tier"]),
    radix: finite(body["radix"]),
    host: text(body["host"]),
    attrs: obj(body["attrs"]),
    ports: ports.map((raw) => {
      const port = obj(raw);
      return {
        port: String(port["port"] ?? ""),
        peer: text(port["peer"]),
        peer_name: text(port["peer_name"]),
        peer_port: text(port["peer_port"]),
        bandwidth_gbps: finite(port["bandwidth_gbps"]),
        state: text(port["state"]) ?? "up",
        domain: text(port["domain"]) ?? "",
        attrs: obj(port["attrs"]),
      };
    }),
  };
}

/** What the layout alone knows about a node: its links, without port names or counters. */
export function detailsFromModel(model: MapModel, node: number): NodeDetails {
  return {
    id: model.nodeId[node] ?? "",
    name: model.nodeName[node] ?? "",
    kind: model.nodeKind[node] ?? "",
    tier: model.nodeTier[node] ?? null,
    radix: null,
    host: null,
    attrs: {},
    ports: model.linksOfNode(node).map((link, index) => {
      const peer = model.linkA[link] === node ? (model.linkB[link] as number) : (model.linkA[link] as number);
      return {
        port: String(index + 1),
        peer: model.nodeId[peer] ?? null,
        peer_name: model.nodeName[peer] ?? null,
        peer_port: null,
        bandwidth_gbps: model.linkGbps[link] ?? null,
        state: SEVERITY_STATES[model.linkSeverity[link] as number] ?? "up",
        domain: model.linkScaleOut[link] === 1 ? "scale-out" : "scale-up",
        attrs: {},
      };
    }),
  };
}

function counters(attrs: Readonly<Record<string, unknown>>): string {
  return Object.entries(attrs)
    .filter(([, value]) => typeof value === "number" || typeof value === "string")
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(", ");
}

export function renderDetails(doc: Document, details: NodeDetails, t: Translate, onPeer: (id: string) => void): HTMLElement[] {
  const none = t("map.tooltip.none");
  const rows: [string, string][] = [
    [t("map.tooltip.kind"), kindLabel(details.kind, t)],
    [t("map.tooltip.tier"), details.tier === null ? none : tierLabel(details.tier, t)],
    [t("map.tooltip.host"), details.host ?? none],
  ];
  if (details.radix !== null) {
    rows.push([t("map.details.radix"), String(details.radix)]);
  }
  for (const [key, value] of Object.entries(details.attrs)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      rows.push([key, String(value)]);
    }
  }
  const list = element(doc, "dl", { class: "kv" }, rows.flatMap(([label, value]) => [element(doc, "dt", {}, [label]), element(doc, "dd", {}, [value])]));
  const heading = element(doc, "h4", {}, [`${t("map.details.ports")} (${details.ports.length})`]);
  if (details.ports.length === 0) {
    return [list, heading, element(doc, "p", { class: "muted" }, [t("map.details.noPorts")])];
  }
  const head = element(doc, "tr", {}, [
    "map.details.port",
    "map.details.peer",
    "map.details.peerPort",
    "map.details.speed",
    "map.details.state",
    "map.details.domain",
    "map.details.counters",
  ].map((key) => element(doc, "th", {}, [t(key as Parameters<Translate>[0])])));
  const body = details.ports.map((port) => {
    const peerCell = element(doc, "td", {});
    if (port.peer !== null) {
      const button = element(doc, "button", { type: "button", class: "link-button" }, [port.peer_name ?? port.peer]);
      const peer = port.peer;
      button.addEventListener("click", () => onPeer(peer));
      peerCell.append(button);
    } else {
      peerCell.append(none);
    }
    return element(doc, "tr", { class: `port-${port.state}` }, [
      element(doc, "td", {}, [port.port]),
      peerCell,
      element(doc, "td", {}, [port.peer_port ?? none]),
      element(doc, "td", { class: "num" }, [port.bandwidth_gbps === null ? none : t("map.details.gbps", { gbps: port.bandwidth_gbps })]),
      element(doc, "td", {}, [port.state]),
      element(doc, "td", {}, [port.domain]),
      element(doc, "td", {}, [counters(port.attrs) || none]),
    ]);
  });
  return [list, heading, element(doc, "table", { class: "data tmap-ports" }, [element(doc, "thead", {}, [head]), element(doc, "tbody", {}, body)])];
}

/** What the details panel shows for a picked link: its two ends, its cables (between two nodes) and their summary. */
export interface LinkDetails {
  readonly a: { readonly id: string | null; readonly name: string };
  readonly b: { readonly id: string | null; readonly name: string };
  /** True when an end is a closed group: the edge stands for every link between the two. */
  readonly aggregated: boolean;
  readonly summary: LinkSummary;
  /** The cables as end a's ports see them (empty for an aggregate). */
  readonly cables: readonly PortDetails[];
}

/** End a's ports that reach end b: the cables of the link between them. */
export function cablesTo(details: NodeDetails, peerId: string): PortDetails[] {
  return details.ports.filter((port) => port.peer === peerId);
}

function attrText(attrs: Readonly<Record<string, unknown>>, key: string): string | null {
  const value = attrs[key];
  return typeof value === "string" || typeof value === "number" ? String(value) : null;
}

/** A cable's lane width and signalling rate as its port reports them ("4x NDR"); "" when it reports neither. */
export function cableWidth(cable: PortDetails): string {
  return [attrText(cable.attrs, "width"), attrText(cable.attrs, "speed")].filter((part) => part !== null).join(" ");
}

export function renderLinkDetails(
  doc: Document,
  details: LinkDetails,
  t: Translate,
  numbers: NumberFormatters,
  onEnd: (id: string) => void,
): HTMLElement[] {
  const none = t("map.tooltip.none");
  const { summary } = details;
  const rows: [string, string][] = [
    [t("map.linkDetails.links"), numbers.integer(summary.links)],
    [t("map.linkDetails.bandwidth"), t("map.details.gbps", { gbps: numbers.integer(summary.gbps) })],
    [
      t("map.details.state"),
      t("map.linkDetails.states", { up: numbers.integer(summary.up), degraded: numbers.integer(summary.degraded), down: numbers.integer(summary.down) }),
    ],
    [t("map.linkDetails.utilisation"), summary.utilisation === null ? none : numbers.percent(summary.utilisation)],
  ];
  const list = element(
    doc,
    "dl",
    { class: "kv tmap-link-summary" },
    rows.flatMap(([label, value]) => [element(doc, "dt", {}, [label]), element(doc, "dd", {}, [value])]),
  );
  const ends = element(
    doc,
    "p",
    { class: "tmap-link-ends" },
    [details.a, details.b].flatMap((end) => {
      if (end.id === null) {
        return [];
      }
      const id = end.id;
      const button = element(doc, "button", { type: "button", class: "link-button" }, [t("map.linkDetails.show", { name: end.name })]);
      button.addEventListener("click", () => onEnd(id));
      return [button, " "];
    }),
  );
  if (details.aggregated) {
    const faulty = summary.degraded + summary.down;
    const note = faulty > 0 ? t("map.linkDetails.aggregateFaulty", { faulty: numbers.integer(faulty) }) : t("map.linkDetails.aggregate");
    return [list, element(doc, "p", { class: "muted" }, [note])];
  }
  const head = element(
    doc,
    "tr",
    {},
    [
      t("map.linkDetails.portOf", { name: details.a.name }),
      t("map.linkDetails.portOf", { name: details.b.name }),
      t("map.details.speed"),
      t("map.linkDetails.width"),
      t("map.details.state"),
      t("map.details.domain"),
    ].map((label) => element(doc, "th", {}, [label])),
  );
  const body = details.cables.map((cable) => {
    const width = cableWidth(cable);
    return element(doc, "tr", { class: `port-${cable.state}` }, [
      element(doc, "td", {}, [cable.port]),
      element(doc, "td", {}, [cable.peer_port ?? none]),
      element(doc, "td", { class: "num" }, [cable.bandwidth_gbps === null ? none : t("map.details.gbps", { gbps: cable.bandwidth_gbps })]),
      element(doc, "td", {}, [width || none]),
      element(doc, "td", {}, [cable.state]),
      element(doc, "td", {}, [cable.domain]),
    ]);
  });
  const table = element(doc, "table", { class: "data tmap-cables" }, [element(doc, "thead", {}, [head]), element(doc, "tbody", {}, body)]);
  return [list, table, ends];
}
