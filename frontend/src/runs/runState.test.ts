import { describe, expect, it } from "vitest";
import {
  EMPTY_TRACKER,
  applyFrame,
  applySnapshot,
  canCancelRuns,
  isTerminal,
  parseRun,
  parseRunStateFrame,
  runSubresourceUrl,
  type Run,
} from "./runState";
import { runSnapshot, runStateMessage } from "../testing/fakes";

function run(overrides: Record<string, unknown> = {}): Run {
  const parsed = parseRun(runSnapshot(overrides));
  if (parsed === null) {
    throw new Error("fixture is not a run");
  }
  return parsed;
}

function frame(seq: number, overrides: Record<string, unknown> = {}) {
  const parsed = parseRunStateFrame(JSON.stringify(runStateMessage(seq, overrides)));
  if (parsed === null) {
    throw new Error("fixture is not a frame");
  }
  return parsed;
}

describe("parseRunStateFrame", () => {
  it("accepts a run.state message", () => {
    expect(frame(3).seq).toBe(3);
    expect(frame(3).run.status).toBe("running");
  });

  it("rejects other message types, bad JSON, bad seq and bad runs", () => {
    expect(parseRunStateFrame("not json")).toBeNull();
    expect(parseRunStateFrame(JSON.stringify({ ...runStateMessage(1), type: "chat.message" }))).toBeNull();
    expect(parseRunStateFrame(JSON.stringify({ ...runStateMessage(1), seq: "1" }))).toBeNull();
    expect(parseRunStateFrame(JSON.stringify({ ...runStateMessage(1), seq: 1.5 }))).toBeNull();
    expect(parseRunStateFrame(JSON.stringify(runStateMessage(1, { status: "exploded" })))).toBeNull();
  });
});

describe("parseRun", () => {
  it("clamps progress into 0..1 and fills optional fields", () => {
    const parsed = parseRun({ id: 1, kind: "hop_stats", status: "pending", progress: 1.7 });
    expect(parsed).toMatchObject({ progress: 1, message: "", result: null, error: null, finished_at: null });
  });
});

describe("applyFrame", () => {
  it("applies increasing seqs and counts them", () => {
    const tracker = applyFrame(applyFrame(EMPTY_TRACKER, frame(1)), frame(2, { progress: 0.5 }));
    expect(tracker.lastSeq).toBe(2);
    expect(tracker.framesApplied).toBe(2);
    expect(tracker.run?.progress).toBe(0.5);
  });

  it("tolerates gaps: frames are full snapshots", () => {
    const tracker = applyFrame(applyFrame(EMPTY_TRACKER, frame(1)), frame(7, { progress: 0.9 }));
    expect(tracker.run?.progress).toBe(0.9);
  });

  it("ignores late and duplicate frames", () => {
    const current = applyFrame(EMPTY_TRACKER, frame(5, { progress: 0.6 }));
    expect(applyFrame(current, frame(4, { progress: 0.4 }))).toBe(current);
    expect(applyFrame(current, frame(5, { progress: 0.7 }))).toBe(current);
  });

  it("never leaves a terminal status", () => {
    const done = applySnapshot(EMPTY_TRACKER, run({ status: "succeeded", progress: 1 }));
    expect(applyFrame(done, frame(1, { status: "running" }))).toBe(done);
  });

  it("treats cancelled as terminal, like succeeded and failed", () => {
    const cancelled = applyFrame(EMPTY_TRACKER, frame(4, { status: "cancelled", error: "Cancelled by a user." }));
    expect(cancelled.run?.status).toBe("cancelled");
    expect(applyFrame(cancelled, frame(5, { status: "running" }))).toBe(cancelled);
    expect(applySnapshot(cancelled, run({ status: "failed" }))).toBe(cancelled);
  });
});

describe("applySnapshot", () => {
  it("fills an empty view", () => {
    const tracker = applySnapshot(EMPTY_TRACKER, run());
    expect(tracker.run?.status).toBe("running");
    expect(tracker.framesApplied).toBe(0);
  });

  it("does not overrule a websocket frame with a snapshot of unknown age", () => {
    const live = applyFrame(EMPTY_TRACKER, frame(3, { progress: 0.8 }));
    expect(applySnapshot(live, run({ progress: 0.2 }))).toBe(live);
  });

  it("lets a terminal snapshot finish a view still running", () => {
    const live = applyFrame(EMPTY_TRACKER, frame(3));
    const finished = applySnapshot(live, run({ status: "failed", error: "boom" }));
    expect(finished.run?.status).toBe("failed");
    expect(finished.lastSeq).toBe(3);
  });
});

describe("isTerminal", () => {
  it("holds for the three outcomes only", () => {
    expect(["pending", "running", "succeeded", "failed", "cancelled"].map((status) => isTerminal(status as Run["status"]))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});

describe("canCancelRuns", () => {
  it("lets operators and admins cancel, nobody else", () => {
    expect(canCancelRuns("operator")).toBe(true);
    expect(canCancelRuns("admin")).toBe(true);
    expect(canCancelRuns("viewer")).toBe(false);
    expect(canCancelRuns("")).toBe(false);
    expect(canCancelRuns(undefined)).toBe(false);
  });
});

describe("runSubresourceUrl", () => {
  it("appends the action to the run's URL with Django's trailing slash", () => {
    expect(runSubresourceUrl("/api/runs/12/", "cancel")).toBe("/api/runs/12/cancel/");
    expect(runSubresourceUrl("/api/runs/12", "detail")).toBe("/api/runs/12/detail/");
  });
});
