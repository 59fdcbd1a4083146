// Translated names for everything the map shows: legend entries, tier names,
// group kinds and the hover tooltip.

import type { MessageKey, Translate } from "../core/i18n";

export const CATEGORY_LABELS: Readonly<Record<string, MessageKey>> = {
  core: "map.category.core",
  spine: "map.category.spine",
  leaf: "map.category.leaf",
  card: "map.category.card",
  nic: "map.category.nic",
  host: "map.category.host",
  aggregation: "map.category.aggregation",
  other: "map.category.other",
};

export const LINK_STATE_LABELS = {
  up: "map.link.up",
  degraded: "map.link.degraded",
  down: "map.link.down",
} as const satisfies Readonly<Record<string, MessageKey>>;

export const TIER_LABELS: Readonly<Record<string, MessageKey>> = {
  core: "map.row.core",
  spine: "map.row.spine",
  leaf: "map.row.leaf",
};

export const GROUP_KIND_LABELS: Readonly<Record<string, MessageKey>> = {
  domain: "map.group.domain",
  block: "map.group.block",
  pod: "map.group.pod",
  leaf: "map.group.leaf",
  tier: "map.group.tier",
  unattached: "map.group.unattached",
};

const KIND_LABELS: Readonly<Record<string, MessageKey>> = {
  card: "map.kind.card",
  switch: "map.kind.switch",
  nic: "map.kind.nic",
  host: "map.kind.host",
  aggregation: "map.kind.aggregation",
};

/** A node kind's translated name; kinds this frontend does not know are shown as sent. */
export function kindLabel(kind: string, t: Translate): string {
  const key = Object.hasOwn(KIND_LABELS, kind) ? KIND_LABELS[kind] : undefined;
  return key === undefined ? kind : t(key);
}

export function tierLabel(tier: string | null, t: Translate): string {
  const key = tier === null ? undefined : TIER_LABELS[tier];
  return key === undefined ? (tier ?? t("map.tooltip.none")) : t(key);
}

export function groupKindLabel(kind: string, t: Translate): string {
  const key = GROUP_KIND_LABELS[kind];
  return key === undefined ? kind : t(key);
}
