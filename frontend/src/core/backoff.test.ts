import { describe, expect, it } from "vitest";
import { backoffDelay } from "./backoff";

describe("backoffDelay", () => {
  const noJitter = () => 0;
  const maxJitter = () => 1;

  it("doubles from one second and caps at fifteen", () => {
    const schedule = [0, 1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(attempt, noJitter));
    expect(schedule).toEqual([1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  });

  it("jitters downwards by at most a fifth", () => {
    const schedule = [0, 1, 2, 3, 4].map((attempt) => backoffDelay(attempt, maxJitter));
    expect(schedule).toEqual([800, 1600, 3200, 6400, 12000]);
  });

  it("never exceeds the cap, however long the outage", () => {
    for (const attempt of [10, 100, 10_000]) {
      const delay = backoffDelay(attempt, Math.random);
      expect(delay).toBeGreaterThanOrEqual(12_000);
      expect(delay).toBeLessThanOrEqual(15_000);
    }
  });
});
