import { describe, expect, it } from "vitest";
import { formatLocalDateTime, numberFormatters } from "./format";

describe("formatLocalDateTime", () => {
  it("formats an instant in the requested time zone", () => {
    expect(formatLocalDateTime("2026-11-30T08:15:02Z", "UTC")).toBe("2026-11-30 08:15:02");
    expect(formatLocalDateTime("2026-11-30T08:15:02Z", "Asia/Shanghai")).toBe("2026-11-30 16:15:02");
    expect(formatLocalDateTime("2026-11-30T08:15:02+08:00", "UTC")).toBe("2026-11-30 00:15:02");
  });

  it("crosses the date line correctly", () => {
    expect(formatLocalDateTime("2026-12-31T23:30:00Z", "Asia/Tokyo")).toBe("2027-01-01 08:30:00");
  });

  it("writes midnight as 00, not 24", () => {
    expect(formatLocalDateTime("2026-11-30T00:00:00Z", "UTC")).toBe("2026-11-30 00:00:00");
  });

  it("returns null for text that is not a date", () => {
    expect(formatLocalDateTime("yesterday", "UTC")).toBeNull();
    expect(formatLocalDateTime("", "UTC")).toBeNull();
  });
});

describe("numberFormatters", () => {
  it("groups integers and formats percentages by locale", () => {
    const numbers = numberFormatters("en");
    expect(numbers.integer(523776)).toBe("523,776");
    expect(numbers.decimal(3.14159, 2)).toBe("3.14");
    expect(numbers.percent(0.4567)).toBe("45.7%");
  });
});
