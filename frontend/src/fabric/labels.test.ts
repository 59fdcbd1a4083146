import { describe, expect, it } from "vitest";
import { translator } from "../i18n";
import { tooltipFields } from "./labels";
import { nodeCategory } from "./palette";
import { endpointNode, switchNode } from "../testing/fabricGraphs";

describe("tooltipFields", () => {
  it("lists kind, tier, host and degree in the page language", () => {
    expect(tooltipFields(endpointNode("card-1", "card", "host-07"), 3, translator("en"))).toEqual([
      ["Kind", "Card"],
      ["Tier", "—"],
      ["Host", "host-07"],
      ["Links", "3"],
    ]);
    expect(tooltipFields(switchNode("leaf-1", "leaf"), 40, translator("zh-hans"))).toEqual([
      ["类型", "交换机"],
      ["层级", "叶层"],
      ["主机", "—"],
      ["链路数", "40"],
    ]);
  });

  it("shows an unknown kind verbatim", () => {
    expect(tooltipFields(endpointNode("x", "dpu"), 0, translator("en"))[0]).toEqual(["Kind", "dpu"]);
  });
});

describe("nodeCategory", () => {
  it("colours switches by tier and endpoints by kind", () => {
    expect(nodeCategory(switchNode("s", "spine"))).toBe("spine");
    expect(nodeCategory(switchNode("s", null))).toBe("switch");
    expect(nodeCategory(endpointNode("n", "nic"))).toBe("nic");
    expect(nodeCategory(endpointNode("d", "dpu"))).toBe("other");
  });
});
