// Where the check saw the room differ from its source (issue 43, item 5): a gray map at the analysis size (0 = as the
// source, 255 = a lost or added line, 128 = a cell whose edges changed) and the places a person can read
// ("upper left", "lower centre"). Pure TypeScript, relative imports only.
import { encode } from "fast-png";

export interface ChangeMap {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Cells whose dissimilarity is above this are drawn and counted as changed. */
export const CELL_CHANGED = 0.5;

export function drawCells(
  map: ChangeMap,
  cells: { cols: number; rows: number; values: Float32Array },
  cell: number,
): void {
  for (let cy = 0; cy < cells.rows; cy++) {
    for (let cx = 0; cx < cells.cols; cx++) {
      if (cells.values[cy * cells.cols + cx]! <= CELL_CHANGED) continue;
      for (let y = cy * cell; y < Math.min(map.height, (cy + 1) * cell); y++) {
        for (let x = cx * cell; x < Math.min(map.width, (cx + 1) * cell); x++) {
          const i = y * map.width + x;
          if (map.data[i]! < 128) map.data[i] = 128;
        }
      }
    }
  }
}

const ACROSS = ["left", "centre", "right"] as const;
const DOWN = ["upper", "lower"] as const;

/**
 * The places of the map's changes, most changed first, at most `most`: each is the third across and the half down
 * where a share of the changed pixels lies (lines count twice a cell's pixel).
 */
export function changePlaces(map: ChangeMap, most = 2): string[] {
  const weight = new Float64Array(6);
  let total = 0;
  for (let y = 0; y < map.height; y++) {
    for (let x = 0; x < map.width; x++) {
      const v = map.data[y * map.width + x]!;
      if (!v) continue;
      const w = v >= 255 ? 2 : 1;
      const k = Math.min(1, Math.floor((2 * y) / map.height)) * 3 + Math.min(2, Math.floor((3 * x) / map.width));
      weight[k]! += w;
      total += w;
    }
  }
  if (!total) return [];
  return [...weight.keys()]
    .filter((k) => weight[k]! / total >= 0.2)
    .sort((a, b) => weight[b]! - weight[a]!)
    .slice(0, most)
    .map((k) => `${DOWN[Math.floor(k / 3)]} ${ACROSS[k % 3]}`);
}

/** The map as a gray PNG (a few kilobytes at the analysis size), for storing beside the version. */
export function changeMapPng(map: ChangeMap): Uint8Array {
  return encode({ width: map.width, height: map.height, data: map.data, channels: 1, depth: 8 });
}

/** Whether any pixel of the map is marked. */
export function hasChanges(map: ChangeMap): boolean {
  return map.data.some((v) => v > 0);
}
