// Pure formatting helpers; no DOM access.

import type { MessageKey, Translate } from "./i18n";

const dateTimeFormatters = new Map<string, Intl.DateTimeFormat>();

function dateTimeFormatter(timeZone: string | undefined): Intl.DateTimeFormat {
  const cacheKey = timeZone ?? "";
  let formatter = dateTimeFormatters.get(cacheKey);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      ...(timeZone === undefined ? {} : { timeZone }),
    });
    dateTimeFormatters.set(cacheKey, formatter);
  }
  return formatter;
}

/**
 * Formats an ISO-8601 instant as "YYYY-MM-DD HH:MM:SS" in the given time zone
 * (the viewer's own by default). Returns null for unparseable input so callers
 * can leave the server's text alone.
 */
export function formatLocalDateTime(iso: string, timeZone?: string): string | null {
  const instant = new Date(iso);
  if (Number.isNaN(instant.getTime())) {
    return null;
  }
  // Assemble from parts: locale patterns differ in order and separators, and
  // operators expect the same sortable layout regardless of UI language.
  const parts: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const part of dateTimeFormatter(timeZone).formatToParts(instant)) {
    parts[part.type] = part.value;
  }
  const { year, month, day, hour, minute, second } = parts;
  return `${year}-${month}-${day} ${hour}:${minute}:${second}`;
}

export interface NumberFormatters {
  integer(value: number): string;
  decimal(value: number, fractionDigits: number): string;
  percent(fraction: number): string;
}

export function numberFormatters(locale: string): NumberFormatters {
  const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const percent = new Intl.NumberFormat(locale, {
    style: "percent",
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  });
  return {
    integer: (value) => integer.format(value),
    decimal: (value, fractionDigits) =>
      new Intl.NumberFormat(locale, {
        minimumFractionDigits: fractionDigits,
        maximumFractionDigits: fractionDigits,
      }).format(value),
    percent: (fraction) => percent.format(fraction),
  };
}

const SIZE_UNITS: readonly MessageKey[] = ["size.bytes", "size.kib", "size.mib", "size.gib"];

/** A file size for people: "512 B", "1.5 KiB", "23 MiB" (binary units; one decimal below 10). */
export function formatByteSize(bytes: number, numbers: NumberFormatters, t: Translate): string {
  let value = Math.max(bytes, 0);
  let unit = 0;
  while (value >= 1024 && unit < SIZE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  // Round first so 1023.96 KiB cannot print as "1,024 KiB".
  if (unit < SIZE_UNITS.length - 1 && Math.round(value) >= 1024) {
    value /= 1024;
    unit += 1;
  }
  const size = unit === 0 ? numbers.integer(value) : value < 9.95 ? numbers.decimal(value, 1) : numbers.integer(value);
  return t(SIZE_UNITS[unit] ?? "size.bytes", { size });
}

/** Rounds to three significant digits (whole numbers from 1,000 up), so units can be bumped before printing. */
function roundSignificant(value: number): number {
  return Math.abs(value) >= 1000 ? Math.round(value) : Number(value.toPrecision(3));
}

/** Three significant digits, or a whole number from 1,000 up: "0.123", "4.56", "45.6", "456", "4,560". */
export function formatSignificant(value: number, numbers: NumberFormatters): string {
  const rounded = roundSignificant(value);
  const magnitude = Math.abs(rounded);
  if (magnitude >= 100 || rounded === 0) {
    return numbers.integer(rounded);
  }
  // 2 decimals from 1 up, 3 from 0.1, 4 from 0.01 …; capped so tiny values stay short.
  return numbers.decimal(rounded, Math.min(2 - Math.floor(Math.log10(magnitude)), 6));
}

/** Picks the largest unit the value reaches, after rounding, so 999.96 µs prints as "1.00 ms". */
function scaled(value: number, steps: readonly number[]): { value: number; unit: number } {
  let unit = 0;
  while (unit < steps.length - 1 && roundSignificant(value / (steps[unit + 1] as number)) >= 1) {
    unit += 1;
  }
  return { value: value / (steps[unit] as number), unit };
}

const DURATION_STEPS = [1e-6, 1e-3, 1];
const DURATION_UNITS: readonly MessageKey[] = ["duration.us", "duration.ms", "duration.s"];

/** A simulated time: "812 µs", "13.7 ms", "1.20 s" (three significant digits). */
export function formatDuration(seconds: number, numbers: NumberFormatters, t: Translate): string {
  const { value, unit } = scaled(Math.max(seconds, 0), DURATION_STEPS);
  return t(DURATION_UNITS[unit] ?? "duration.s", { value: formatSignificant(value, numbers) });
}

const DECIMAL_SIZE_STEPS = [1, 1e3, 1e6, 1e9, 1e12];
const DECIMAL_SIZE_UNITS: readonly MessageKey[] = ["size.bytes", "size.kb", "size.mb", "size.gb", "size.tb"];

/** Bytes in decimal units, as nccl-tests and the size field count them: "512 B", "342 MB", "1.07 GB". */
export function formatDecimalByteSize(bytes: number, numbers: NumberFormatters, t: Translate): string {
  const { value, unit } = scaled(Math.max(bytes, 0), DECIMAL_SIZE_STEPS);
  const size = unit === 0 ? numbers.integer(value) : formatSignificant(value, numbers);
  return t(DECIMAL_SIZE_UNITS[unit] ?? "size.bytes", { size });
}

/** A bandwidth in GB/s (10^9 bytes per second), three significant digits. */
export function formatGBps(value: number, numbers: NumberFormatters, t: Translate): string {
  return t("rate.GBps", { value: formatSignificant(value, numbers) });
}
