import { describe, expect, it } from "vitest";
import { SpatialGrid } from "./spatialGrid";

describe("SpatialGrid", () => {
  const points = [
    { x: 10, y: 10, item: "a" },
    { x: 30, y: 10, item: "b" },
    { x: 31, y: 40, item: "c" },
  ];
  const grid = new SpatialGrid(points, 16);

  it("finds the nearest point within the radius", () => {
    expect(grid.nearest(12, 11, 8)?.item).toBe("a");
    expect(grid.nearest(28, 12, 8)?.item).toBe("b");
  });

  it("looks across cell borders", () => {
    // (31, 40) is in a different cell from (31, 33).
    expect(grid.nearest(31, 33, 8)?.item).toBe("c");
  });

  it("returns null when nothing is within reach", () => {
    expect(grid.nearest(100, 100, 8)).toBeNull();
    expect(grid.nearest(20, 10, 5)).toBeNull();
  });

  it("agrees with a linear scan on random queries", () => {
    let seed = 1;
    const random = () => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const cloud = Array.from({ length: 500 }, (_, item) => ({ x: random() * 800, y: random() * 500, item }));
    const index = new SpatialGrid(cloud, 16);
    for (let query = 0; query < 200; query += 1) {
      const x = random() * 800;
      const y = random() * 500;
      const scan = cloud
        .map((point) => ({ point, distance: Math.hypot(point.x - x, point.y - y) }))
        .filter(({ distance }) => distance <= 12)
        .sort((left, right) => left.distance - right.distance)[0];
      expect(index.nearest(x, y, 12)?.item).toBe(scan?.point.item);
    }
  });
});
