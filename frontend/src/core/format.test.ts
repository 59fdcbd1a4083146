import { describe, expect, it } from "vitest";
import {
  formatByteSize,
  formatDecimalByteSize,
  formatDuration,
  formatGBps,
  formatLocalDateTime,
  formatSignificant,
  numberFormatters,
} from "./format";
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

describe("formatSignificant", () => {
  const sig = (value: number) => formatSignificant(value, numberFormatters("en"));

  it("keeps three significant digits below 1,000 and whole numbers above", () => {
    expect(sig(4.5678)).toBe("4.57");
    expect(sig(45.678)).toBe("45.7");
    expect(sig(456.78)).toBe("457");
    expect(sig(4567.8)).toBe("4,568");
    expect(sig(0)).toBe("0");
    expect(sig(0.12345)).toBe("0.123");
    expect(sig(0.0012345)).toBe("0.00123");
    expect(sig(9.996)).toBe("10.0");
    expect(sig(99.96)).toBe("100");
  });
});

describe("formatDuration", () => {
  const duration = (seconds: number) => formatDuration(seconds, numberFormatters("en"), translator("en"));

  it("picks µs, ms or s", () => {
    expect(duration(812e-6)).toBe("812 µs");
    expect(duration(4.2e-6)).toBe("4.20 µs");
    expect(duration(0.013671)).toBe("13.7 ms");
    expect(duration(0.001)).toBe("1.00 ms");
    expect(duration(1.2)).toBe("1.20 s");
    expect(duration(4321)).toBe("4,321 s");
  });

  it("moves up a unit rather than print 1,000 of one", () => {
    expect(duration(0.0009996)).toBe("1.00 ms");
    expect(duration(0.99996)).toBe("1.00 s");
  });

  it("handles zero and sub-microsecond times", () => {
    expect(duration(0)).toBe("0 µs");
    expect(duration(3e-7)).toBe("0.300 µs");
  });

  it("is translated", () => {
    expect(formatDuration(0.0137, numberFormatters("zh-Hans"), translator("zh-hans"))).toBe("13.7 毫秒");
  });
});

describe("formatDecimalByteSize", () => {
  const size = (bytes: number) => formatDecimalByteSize(bytes, numberFormatters("en"), translator("en"));

  it("uses powers of 1,000 like the size field", () => {
    expect(size(512)).toBe("512 B");
    expect(size(4096)).toBe("4.10 KB");
    expect(size(342e6)).toBe("342 MB");
    expect(size(2 ** 30)).toBe("1.07 GB");
    expect(size(6.84e11)).toBe("684 GB");
    expect(size(2.5e12)).toBe("2.50 TB");
    expect(size(3e15)).toBe("3,000 TB");
  });

  it("moves up a unit rather than print 1,000 of one", () => {
    expect(size(999_999)).toBe("1.00 MB");
  });
});

describe("formatGBps", () => {
  it("prints GB/s with three significant digits", () => {
    expect(formatGBps(47.3212, numberFormatters("en"), translator("en"))).toBe("47.3 GB/s");
    expect(formatGBps(0.123456, numberFormatters("en"), translator("en"))).toBe("0.123 GB/s");
  });
});
