// Pure formatting helpers; no DOM access.

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
