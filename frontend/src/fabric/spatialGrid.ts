// Uniform-grid point index for hover hit-testing: a lookup visits only the
// cells within reach instead of every node on each mousemove.

export interface IndexedPoint<T> {
  readonly x: number;
  readonly y: number;
  readonly item: T;
}

export class SpatialGrid<T> {
  private readonly cells = new Map<string, IndexedPoint<T>[]>();

  constructor(
    points: Iterable<IndexedPoint<T>>,
    private readonly cellSize: number,
  ) {
    for (const point of points) {
      const key = this.key(this.cell(point.x), this.cell(point.y));
      const bucket = this.cells.get(key);
      if (bucket === undefined) {
        this.cells.set(key, [point]);
      } else {
        bucket.push(point);
      }
    }
  }

  /** The point closest to (x, y) no farther than `radius`, or null. */
  nearest(x: number, y: number, radius: number): IndexedPoint<T> | null {
    let best: IndexedPoint<T> | null = null;
    let bestDistanceSquared = radius * radius;
    for (let cellX = this.cell(x - radius); cellX <= this.cell(x + radius); cellX += 1) {
      for (let cellY = this.cell(y - radius); cellY <= this.cell(y + radius); cellY += 1) {
        for (const point of this.cells.get(this.key(cellX, cellY)) ?? []) {
          const distanceSquared = (point.x - x) ** 2 + (point.y - y) ** 2;
          if (distanceSquared < bestDistanceSquared || (best === null && distanceSquared === bestDistanceSquared)) {
            best = point;
            bestDistanceSquared = distanceSquared;
          }
        }
      }
    }
    return best;
  }

  private cell(coordinate: number): number {
    return Math.floor(coordinate / this.cellSize);
  }

  private key(cellX: number, cellY: number): string {
    return `${cellX},${cellY}`;
  }
}
