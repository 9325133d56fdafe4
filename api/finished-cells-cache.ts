import type { cellTotals, LeaderboardRow } from '../activities/evals/leaderboard.js';
import type { CellOutcome } from '../db/experiment-cells.js';

/**
 * Finished experiments' cells, kept in the API process's memory for the reads that follow.
 *
 * Why: a finished experiment's cells never change again, yet authors poll and page through its
 * leaderboard and matrix. At 5,000 cells each read would fetch megabytes of snapshot text from Postgres
 * and parse the outcomes again; from here a read costs the experiment's row (for its name, status and
 * whether it still exists) and writing out text that is already made. Nothing to invalidate: an entry is
 * only used after its experiment was found, finished, in the same request, and ids are never reused.
 * Bounded by an estimate of its size in memory, least recently used out first.
 */

export interface FinishedCells {
  outcomes: CellOutcome[];
  /** The case × variant matrix as UTF-8 JSON, as Postgres wrote it: sent as it is, never encoded again. */
  matrix: Buffer;
  /** The totals and the ranking (before any baseline comparison), made by the first read that needs them. */
  summary?: CellsSummary;
}

export interface CellsSummary {
  totals: ReturnType<typeof cellTotals>;
  ranking: LeaderboardRow[];
}

/** What the cache holds at most per API process, in bytes as estimated by `set`. */
export const FINISHED_CELLS_CACHE_BYTES = 128 * 1024 * 1024;

export class FinishedCellsCache {
  private readonly entries = new Map<string, { cells: FinishedCells; bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes = FINISHED_CELLS_CACHE_BYTES) {}

  get(experimentId: string): FinishedCells | undefined {
    const entry = this.entries.get(experimentId);
    if (entry === undefined) return undefined;
    // Map order is insertion order: moving the entry to the end makes it the most recently used.
    this.entries.delete(experimentId);
    this.entries.set(experimentId, entry);
    return entry.cells;
  }

  /** `outcomesText` is the outcomes' JSON, the measure of their size (two bytes a character once parsed). */
  set(experimentId: string, cells: FinishedCells, outcomesText: string): void {
    const bytes = cells.matrix.byteLength + 2 * outcomesText.length;
    if (bytes > this.maxBytes) return;
    this.delete(experimentId);
    this.entries.set(experimentId, { cells, bytes });
    this.bytes += bytes;
    for (const [id, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= entry.bytes;
    }
  }

  delete(experimentId: string): void {
    const entry = this.entries.get(experimentId);
    if (entry === undefined) return;
    this.entries.delete(experimentId);
    this.bytes -= entry.bytes;
  }
}
