// What the map's tooltip says about the link under the pointer: its two ends,
// their ports, speed and width, state, how many cables (or, between closed
// groups, links) the drawn edge stands for and, while an overlay is live, the
// utilisation. Pure: the map passes what the layout and the node endpoint know.

import type { NumberFormatters } from "../core/format";
import type { MessageKey, Translate } from "../core/i18n";
import { cableWidth, type PortDetails } from "./details";
import type { LinkSummary } from "./linkSelection";

export interface LinkTooltipInput {
  /** The ends' names, the lower one first. */
  readonly a: string;
  readonly b: string;
  /** True when an end is a closed group: the edge stands for every link between the two. */
  readonly aggregated: boolean;
  readonly summary: LinkSummary;
  /** Speed of each link the edge stands for, from the layout. */
  readonly gbps: readonly number[];
  /** The cables as end a's ports see them; null while unknown (an aggregate, or end a's details not loaded). */
  readonly cables: readonly PortDetails[] | null;
}

export interface TooltipContent {
  readonly title: string;
  /** Label and value; an empty label makes a muted line of its own. */
  readonly lines: readonly (readonly [string, string])[];
}

const STATE_LABELS: Readonly<Record<"up" | "degraded" | "down", MessageKey>> = {
  up: "map.linkTooltip.up",
  degraded: "map.linkTooltip.degraded",
  down: "map.linkTooltip.down",
};

/** The values in first-seen order, each once, joined: "1, 2" for two ports, "400 Gb/s" for two cables of one speed. */
function distinct(values: readonly string[]): string {
  return [...new Set(values)].join(", ");
}

function stateText(summary: LinkSummary, t: Translate, numbers: NumberFormatters): string {
  const { links, up, degraded, down } = summary;
  for (const state of ["up", "degraded", "down"] as const) {
    if (summary[state] === links) {
      return t(STATE_LABELS[state]);
    }
  }
  return t("map.linkDetails.states", { up: numbers.integer(up), degraded: numbers.integer(degraded), down: numbers.integer(down) });
}

export function linkTooltip(input: LinkTooltipInput, t: Translate, numbers: NumberFormatters): TooltipContent {
  const { summary, cables } = input;
  const none = t("map.tooltip.none");
  const gbps = (value: number): string => t("map.details.gbps", { gbps: numbers.integer(value) });
  const lines: [string, string][] = [];
  if (cables !== null && cables.length > 0) {
    lines.push([t("map.linkDetails.portOf", { name: input.a }), distinct(cables.map((cable) => cable.port))]);
    lines.push([t("map.linkDetails.portOf", { name: input.b }), distinct(cables.map((cable) => cable.peer_port ?? none))]);
  }
  if (input.aggregated) {
    lines.push([t("map.linkDetails.links"), numbers.integer(summary.links)]);
  } else {
    lines.push([t("map.details.speed"), distinct(input.gbps.map(gbps))]);
    const widths = (cables ?? []).map(cableWidth).filter((width) => width !== "");
    if (widths.length > 0) {
      lines.push([t("map.linkDetails.width"), distinct(widths)]);
    }
    if (summary.links > 1) {
      lines.push([t("map.linkTooltip.cables"), numbers.integer(summary.links)]);
    }
  }
  if (summary.links > 1) {
    lines.push([t("map.linkDetails.bandwidth"), gbps(summary.gbps)]);
  }
  lines.push([t("map.details.state"), stateText(summary, t, numbers)]);
  if (summary.utilisation !== null) {
    lines.push([t("map.linkDetails.utilisation"), numbers.percent(summary.utilisation)]);
  }
  return { title: `${input.a} → ${input.b}`, lines };
}
