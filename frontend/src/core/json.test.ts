import { describe, expect, it } from "vitest";
import { finite, isRecord, text } from "./json";

describe("reading server JSON", () => {
  it("text keeps non-empty strings only", () => {
    expect(text("leaf01")).toBe("leaf01");
    expect(text("")).toBeNull();
    expect(text(7)).toBeNull();
    expect(text(null)).toBeNull();
    expect(text(["a"])).toBeNull();
  });

  it("finite and isRecord refuse what is not a number or an object", () => {
    expect(finite(2.5)).toBe(2.5);
    expect(finite(Number.NaN)).toBeNull();
    expect(finite("3")).toBeNull();
    expect(isRecord({})).toBe(true);
    expect(isRecord([])).toBe(false);
    expect(isRecord(null)).toBe(false);
  });
});
