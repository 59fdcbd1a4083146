import { describe, expect, it } from "vitest";
import { formatByteSize, formatLocalDateTime, numberFormatters } from "./format";
import { translator } from "./i18n";

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

describe("formatByteSize", () => {
  const size = (bytes: number) => formatByteSize(bytes, numberFormatters("en"), translator("en"));

  it("uses bytes below one KiB", () => {
    expect(size(0)).toBe("0 B");
    expect(size(1023)).toBe("1,023 B");
  });

  it("uses binary units with one decimal below 10", () => {
    expect(size(1024)).toBe("1.0 KiB");
    expect(size(1536)).toBe("1.5 KiB");
    expect(size(20 * 1024 * 1024)).toBe("20 MiB");
    expect(size(3.25 * 1024 ** 3)).toBe("3.3 GiB");
    expect(size(2048 * 1024 ** 3)).toBe("2,048 GiB");
  });

  it("moves up a unit rather than print 1,024 of one", () => {
    expect(size(1024 * 1024 - 1)).toBe("1.0 MiB");
  });

  it("formats numbers for the page's locale", () => {
    expect(formatByteSize(1536, numberFormatters("zh-Hans"), translator("zh-hans"))).toBe("1.5 KiB");
  });
});
