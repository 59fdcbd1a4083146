// The details panel: a node's kind, tier, host and ports (peer, speed,
// state, counters), from the node endpoint or, without one, from the layout.

import { element } from "../core/dom";
import { finite, isRecord, text } from "../core/json";
import type { Translate } from "../core/i18n";
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
