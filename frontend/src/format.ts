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
