import { describe, expect, it } from "vitest";
import { MESSAGES, resolveLanguage, translator } from "./i18n";

describe("message tables", () => {
  it("have the same keys in English and Simplified Chinese", () => {
    expect(Object.keys(MESSAGES["zh-hans"]).sort()).toEqual(Object.keys(MESSAGES.en).sort());
  });

  it("have no empty strings", () => {
    for (const table of Object.values(MESSAGES)) {
      expect(Object.values(table).filter((text) => text.trim() === "")).toEqual([]);
    }
  });

  it("use the same placeholders in both languages", () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();
    for (const [key, english] of Object.entries(MESSAGES.en)) {
      expect(placeholders(MESSAGES["zh-hans"][key as keyof typeof MESSAGES.en]), key).toEqual(placeholders(english));
    }
  });
});

describe("resolveLanguage", () => {
  it("picks Simplified Chinese for Django's zh-hans code in any case", () => {
    expect(resolveLanguage("zh-hans")).toBe("zh-hans");
    expect(resolveLanguage("zh-Hans")).toBe("zh-hans");
  });

  it("falls back to English", () => {
    expect(resolveLanguage(undefined)).toBe("en");
    expect(resolveLanguage("")).toBe("en");
    expect(resolveLanguage("fr")).toBe("en");
  });
});

describe("translator", () => {
  it("fills placeholders", () => {
    expect(translator("en")("map.loadFailed", { detail: "HTTP 500" })).toBe("Could not load the fabric graph: HTTP 500");
    expect(translator("zh-hans")("hopStats.hopsLabel", { hops: 3 })).toBe("3 跳");
  });

  it("leaves unknown placeholders visible rather than printing undefined", () => {
    expect(translator("en")("map.loadFailed")).toBe("Could not load the fabric graph: {detail}");
  });

  it("shows the broker banner text from the contract", () => {
    expect(translator("en")("banner.brokerDown")).toBe(
      "Live updates and background work are unavailable: the message broker (Redis) cannot be reached. Retrying…",
    );
  });
});
