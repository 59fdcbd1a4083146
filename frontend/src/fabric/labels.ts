// Translated names for everything the map shows: legend entries, row labels
// and the hover tooltip.

import type { MessageKey, Translate } from "../i18n";
import type { FabricNode, LinkState, NodeKind } from "./graph";
import type { RowKind } from "./layout";
import type { NodeCategory } from "./palette";

export const CATEGORY_LABELS: Readonly<Record<NodeCategory, MessageKey>> = {
  core: "map.category.core",
  spine: "map.category.spine",
  leaf: "map.category.leaf",
  switch: "map.category.switch",
  card: "map.category.card",
  nic: "map.category.nic",
  host: "map.category.host",
  aggregation: "map.category.aggregation",
  other: "map.category.other",
};

export const LINK_STATE_LABELS: Readonly<Record<LinkState, MessageKey>> = {
  up: "map.link.up",
  degraded: "map.link.degraded",
  down: "map.link.down",
};

export const ROW_LABELS: Readonly<Record<RowKind, MessageKey>> = {
  core: "map.row.core",
  spine: "map.row.spine",
  leaf: "map.row.leaf",
  endpoint: "map.row.endpoint",
};

const KIND_LABELS: Readonly<Record<NodeKind, MessageKey>> = {
  card: "map.kind.card",
  switch: "map.kind.switch",
  nic: "map.kind.nic",
  host: "map.kind.host",
  aggregation: "map.kind.aggregation",
};

function isKnownKind(kind: string): kind is NodeKind {
  return Object.hasOwn(KIND_LABELS, kind);
}

/** A node kind's translated name; kinds this frontend does not know are shown as sent. */
export function kindLabel(kind: string, t: Translate): string {
  return isKnownKind(kind) ? t(KIND_LABELS[kind]) : kind;
}

/** Label/value lines under the node's name in the hover tooltip. */
export function tooltipFields(node: FabricNode, degree: number, t: Translate): [string, string][] {
  const none = t("map.tooltip.none");
  return [
    [t("map.tooltip.kind"), kindLabel(node.kind, t)],
    [t("map.tooltip.tier"), node.tier === null ? none : t(ROW_LABELS[node.tier])],
    [t("map.tooltip.host"), node.host ?? none],
    [t("map.tooltip.degree"), String(degree)],
  ];
}
