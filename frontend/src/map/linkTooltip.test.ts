// The link tooltip's lines: a plain cable, a degraded one, a bundle, an aggregate
// between closed groups, with live utilisation, in English and Chinese.
import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { translator } from "../core/i18n";
import type { PortDetails } from "./details";
import fixture from "./fatTree64.fixture.json";
import { summariseLinks } from "./linkSelection";
import { linkTooltip, type LinkTooltipInput } from "./linkTooltip";
import { parseLayout } from "./model";

const model = parseLayout(fixture);
const card = model.indexOfId.get("card-01") as number;
const cardLink = model.linksOfNode(card)[0] as number;
const en = translator("en");
const enNumbers = numberFormatters("en");

function cable(port: string, peerPort: string, state = "up", width = "4x"): PortDetails {
  return { port, peer: "leaf01", peer_name: "leaf01", peer_port: peerPort, bandwidth_gbps: 400, state, domain: "scale-out", attrs: { width, speed: "NDR" } };
}

function plain(overrides: Partial<LinkTooltipInput> = {}): LinkTooltipInput {
  return {
    a: "node01/mlx5_0",
    b: "leaf01",
    aggregated: false,
    summary: { links: 1, up: 1, degraded: 0, down: 0, gbps: 400, utilisation: null },
    gbps: [400],
    cables: [cable("1", "3")],
    ...overrides,
  };
}

describe("the link tooltip", () => {
  it("names both ends with their ports, the speed, width and state of a plain cable", () => {
    const shown = linkTooltip(plain(), en, enNumbers);
    expect(shown.title).toBe("node01/mlx5_0 → leaf01");
    expect(shown.lines).toEqual([
      ["Port of node01/mlx5_0", "1"],
      ["Port of leaf01", "3"],
      ["Speed", "400 Gb/s"],
      ["Width", "4x NDR"],
      ["State", "Up"],
    ]);
  });

  it("leaves the ports and width out until the end's details are known, and reads the layout's link", () => {
    const summary = summariseLinks(model, [cardLink], null);
    const gbps = model.linkGbps[cardLink] as number;
    const shown = linkTooltip(plain({ a: "card-01", summary, gbps: [gbps], cables: null }), en, enNumbers);
    expect(shown.lines).toEqual([
      ["Speed", `${enNumbers.integer(gbps)} Gb/s`],
      ["State", "Up"],
    ]);
  });

  it("says a degraded cable is degraded, and counts the states of a bundle with thousands separators", () => {
    const degraded = linkTooltip(plain({ summary: { links: 1, up: 0, degraded: 1, down: 0, gbps: 100, utilisation: null }, gbps: [100], cables: [cable("1", "3", "degraded", "1x")] }), en, enNumbers);
    expect(degraded.lines).toContainEqual(["State", "Degraded"]);
    expect(degraded.lines).toContainEqual(["Width", "1x NDR"]);
    const bundle = linkTooltip(
      plain({
        a: "leaf02",
        b: "spine01",
        summary: { links: 2, up: 1, degraded: 1, down: 0, gbps: 500, utilisation: null },
        gbps: [400, 100],
        cables: [cable("17", "2"), cable("18", "3", "degraded", "1x")],
      }),
      en,
      enNumbers,
    );
    expect(bundle.lines).toEqual([
      ["Port of leaf02", "17, 18"],
      ["Port of spine01", "2, 3"],
      ["Speed", "400 Gb/s, 100 Gb/s"],
      ["Width", "4x NDR, 1x NDR"],
      ["Parallel cables", "2"],
      ["Bandwidth", "500 Gb/s"],
      ["State", "1 up, 1 degraded, 0 down"],
    ]);
    const aggregate = linkTooltip(
      { a: "leaf-01 (33)", b: "spine (16)", aggregated: true, summary: { links: 1024, up: 1024, degraded: 0, down: 0, gbps: 409600, utilisation: null }, gbps: [], cables: null },
      en,
      enNumbers,
    );
    expect(aggregate.lines).toEqual([
      ["Links", "1,024"],
      ["Bandwidth", "409,600 Gb/s"],
      ["State", "Up"],
    ]);
  });

  it("shows the utilisation while an overlay is live", () => {
    const utilisation = new Float32Array(model.linkCount).fill(Number.NaN);
    utilisation[cardLink] = 0.625;
    const summary = summariseLinks(model, [cardLink], utilisation);
    const shown = linkTooltip(plain({ summary }), en, enNumbers);
    expect(shown.lines.at(-1)).toEqual(["Utilisation", "62.5%"]);
    expect(linkTooltip(plain(), en, enNumbers).lines.map(([label]) => label)).not.toContain("Utilisation");
  });

  it("speaks Chinese", () => {
    const zh = translator("zh-hans");
    const summary = { links: 2, up: 0, degraded: 0, down: 2, gbps: 800, utilisation: 0.5 };
    const shown = linkTooltip(plain({ summary, gbps: [400, 400], cables: [cable("1", "3"), cable("2", "4")] }), zh, numberFormatters("zh-Hans"));
    expect(shown.lines).toEqual([
      ["node01/mlx5_0 的端口", "1, 2"],
      ["leaf01 的端口", "3, 4"],
      ["速率", "400 Gb/s"],
      ["宽度", "4x NDR"],
      ["并行线缆", "2"],
      ["带宽", "800 Gb/s"],
      ["状态", "中断"],
      ["利用率", "50.0%"],
    ]);
  });
});
