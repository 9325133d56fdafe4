import { ConversionError } from './errors.js';

/** Limits of one conversion. Every field has a default; see {@link DEFAULT_LIMITS}. */
export interface ConversionLimits {
  /** Wall-clock budget for the conversion, in milliseconds. Default 30 000. */
  maxMs?: number;
  /** Total bytes an archive (docx, pptx, xlsx, epub, odf) may inflate to. Default 100 MiB. */
  maxUncompressedBytes?: number;
  /**
   * Largest uncompressed/compressed ratio tolerated for an archive entry of 1 MiB or more (declared or
   * actual). Default 200; deflate itself tops out near 1032.
   */
  maxCompressionRatio?: number;
}

export interface ConvertOptions extends ConversionLimits {
  /** Aborts the conversion (for example the Temporal activity's cancellation signal). */
  signal?: AbortSignal;
}

export const DEFAULT_LIMITS = {
  maxMs: 30_000,
  maxUncompressedBytes: 100 * 1024 * 1024,
  maxCompressionRatio: 200,
} as const;

/** Work done between two yields to the event loop, so timers, heartbeats and aborts get a turn. */
const YIELD_EVERY_MS = 50;

/**
 * The running state of one conversion: its deadline, its abort signal, its size limits and the
 * warnings collected on the way. Converters call {@link check} inside loops and {@link checkpoint}
 * between larger units (a slide, a sheet, a page) to stay within the time budget.
 */
export class ConversionContext {
  readonly deadline: number;
  readonly maxMs: number;
  readonly maxUncompressedBytes: number;
  readonly maxCompressionRatio: number;
  readonly signal: AbortSignal | undefined;
  readonly warnings: string[] = [];
  private lastYield = Date.now();

  constructor(options: ConvertOptions = {}) {
    this.maxMs = positive(options.maxMs, DEFAULT_LIMITS.maxMs);
    this.maxUncompressedBytes = positive(options.maxUncompressedBytes, DEFAULT_LIMITS.maxUncompressedBytes);
    this.maxCompressionRatio = positive(options.maxCompressionRatio, DEFAULT_LIMITS.maxCompressionRatio);
    this.signal = options.signal;
    this.deadline = Date.now() + this.maxMs;
  }

  /** Throws when the signal fired or the deadline passed. Cheap enough for inner loops. */
  check(): void {
    if (this.signal?.aborted) throw abortedError();
    if (Date.now() > this.deadline) throw this.timeoutError();
  }

  /** {@link check}, and yield to the event loop when the last yield is a while ago. */
  async checkpoint(): Promise<void> {
    this.check();
    if (Date.now() - this.lastYield >= YIELD_EVERY_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.lastYield = Date.now();
      this.check();
    }
  }

  warn(message: string): void {
    if (!this.warnings.includes(message)) this.warnings.push(message);
  }

  timeoutError(): ConversionError {
    return timeoutError(this.maxMs);
  }

  /**
   * Races `work` against the deadline and the abort signal, so an asynchronous step that stalls
   * (a PDF page, a library call) still ends the conversion on time. Synchronous work is bounded by
   * the {@link check} calls inside it.
   */
  async bound<T>(work: Promise<T>): Promise<T> {
    this.check();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.timeoutError()), Math.max(0, this.deadline - Date.now()));
      if (this.signal) {
        onAbort = () => reject(abortedError());
        this.signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    try {
      return await Promise.race([work, stop]);
    } finally {
      clearTimeout(timer);
      if (onAbort) this.signal?.removeEventListener('abort', onAbort);
      // The losing side may still settle later; never let it surface as an unhandled rejection.
      work.catch(() => undefined);
    }
  }
}

export function timeoutError(maxMs: number): ConversionError {
  return new ConversionError(
    'timeout',
    `The conversion took longer than ${formatSeconds(maxMs)} and was stopped; the document may be too large or too complex.`,
  );
}

export function abortedError(): ConversionError {
  return new ConversionError('aborted', 'The conversion was cancelled.');
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}
