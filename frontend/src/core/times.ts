import { formatLocalDateTime } from "./format";

/** Rewrites every <time datetime> under `root` into the viewer's time zone, keeping the ISO value as a tooltip. */
export function localizeTimes(root: ParentNode, timeZone?: string): void {
  for (const time of root.querySelectorAll<HTMLTimeElement>("time[datetime]")) {
    const local = formatLocalDateTime(time.dateTime, timeZone);
    if (local !== null) {
      time.title = time.dateTime;
      time.textContent = local;
    }
  }
}
