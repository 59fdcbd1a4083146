// "Show on map" for placement and failure results: marks one strategy's ranks
// (coloured by tensor-parallel group, from the run's detail) or a row's failed
// switches and links on the page's map. Each action resolves to the sentence
// to show next to the buttons; it never rejects.

import { splitFailedElements } from "./failures";
import type { NumberFormatters } from "../core/format";
import { describeRequestError, type JsonClient } from "../core/http";
import type { Translate } from "../core/i18n";
import type { TopologyMap } from "../map/topologyMap";
import { placementRanks, rankMarks } from "./placement";
import { runSubresourceUrl } from "./runState";

/** The part of the map this needs; tests pass a fake. setLinkMarks is used when the map has it. */
export type MarkMap = Pick<TopologyMap, "setNodeMarks" | "clearOverlay"> & Partial<Pick<TopologyMap, "setLinkMarks">>;

export interface RunMapMarks {
  /** Marks the ranks of `strategy` of the placement run at `runUrl`. */
  showPlacement(runUrl: string, strategy: string): Promise<string>;
  /** Marks failed switches ("failed") and `link:<i>` links. */
  showFailure(elements: readonly string[]): Promise<string>;
  clear(): void;
}

export interface RunMarksContext {
  readonly t: Translate;
  readonly numbers: NumberFormatters;
  readonly http: JsonClient;
  /** The page's map once it is drawn; null when there is none or it failed to load. */
  readonly map: () => Promise<MarkMap | null>;
}

export function runMapMarks(context: RunMarksContext): RunMapMarks {
  const { t, numbers, http } = context;
  const details = new Map<string, Promise<unknown>>();
  let shownOn: MarkMap | null = null;

  const detail = (runUrl: string): Promise<unknown> => {
    let request = details.get(runUrl);
    if (request === undefined) {
      request = http.get(runSubresourceUrl(runUrl, "detail"));
      // A failed fetch may be retried by the next click.
      request.catch(() => details.delete(runUrl));
      details.set(runUrl, request);
    }
    return request;
  };

  const failed = (error: unknown): string => t("marks.failed", { detail: describeRequestError(error, t) });

  return {
    async showPlacement(runUrl, strategy) {
      try {
        const map = await context.map();
        if (map === null) {
          return t("marks.noMap");
        }
        const records = placementRanks(await detail(runUrl), strategy);
        if (records.length === 0) {
          return t("placement.noRanks", { strategy });
        }
        const { ids, marks, groups } = rankMarks(records);
        map.setLinkMarks?.([]);
        map.setNodeMarks(ids, marks);
        shownOn = map;
        return t("placement.shownOnMap", { strategy, ranks: numbers.integer(ids.length), groups: numbers.integer(groups) });
      } catch (error) {
        return failed(error);
      }
    },
    async showFailure(elements) {
      const map = await context.map().catch(() => null);
      if (map === null) {
        return t("marks.noMap");
      }
      const { switches, links } = splitFailedElements(elements);
      map.setNodeMarks(
        switches,
        switches.map(() => "failed"),
      );
      shownOn = map;
      if (map.setLinkMarks !== undefined) {
        map.setLinkMarks(links);
      } else if (links.length > 0) {
        return t("failures.linksNotShown", { elements: elements.join(t("list.separator")) });
      }
      return t("failures.shownOnMap", { elements: elements.join(t("list.separator")) });
    },
    clear() {
      shownOn?.clearOverlay("marks");
      shownOn = null;
    },
  };
}
