import { Worker } from 'node:worker_threads';
import { abortedError, DEFAULT_LIMITS, timeoutError } from './context.js';
import type { ConversionResult, ConvertToMarkdownOptions } from './convert.js';
import type { DocumentFormat } from './detect.js';
import { ConversionError, type ConversionErrorKind } from './errors.js';

export interface IsolatedConvertOptions extends ConvertToMarkdownOptions {
  /** Heap limit of the conversion's worker thread, in MB. Default 1024. */
  maxMemoryMb?: number;
}

/** Time the worker gets beyond maxMs to report its own (cooperative) timeout before it is killed. */
const GRACE_MS = 500;

/**
 * {@link convertToMarkdown} in a worker thread: the same result and errors, with hard limits. The
 * in-process conversion checks its deadline and signal between steps, but a single step (mammoth on a
 * huge document, turndown, one PDF page) is synchronous and cannot be interrupted; here the worker is
 * terminated at the deadline or on abort, and its heap is capped (`maxMemoryMb`), so a hostile file
 * costs at most that time and memory. Starting the worker adds roughly 100–300 ms.
 */
export function convertToMarkdownIsolated(
  bytes: Uint8Array,
  format: DocumentFormat,
  options: IsolatedConvertOptions = {},
): Promise<ConversionResult> {
  const maxMs = options.maxMs && options.maxMs > 0 ? options.maxMs : DEFAULT_LIMITS.maxMs;
  if (options.signal?.aborted) return Promise.reject(abortedError());
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    workerData: {
      bytes,
      format,
      options: {
        maxMs,
        maxUncompressedBytes: options.maxUncompressedBytes,
        maxCompressionRatio: options.maxCompressionRatio,
        contentType: options.contentType,
      },
    },
    resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb ?? 1024 },
  });
  return new Promise<ConversionResult>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(() => finish(() => reject(timeoutError(maxMs))), maxMs + GRACE_MS);
    const onAbort = () => finish(() => reject(abortedError()));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (message: { ok: true; result: ConversionResult } | { ok: false; kind: ConversionErrorKind; message: string }) =>
      finish(() => (message.ok ? resolve(message.result) : reject(new ConversionError(message.kind, message.message)))),
    );
    worker.on('error', (err: Error & { code?: string }) =>
      finish(() =>
        reject(
          err.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new ConversionError('too-large', `The document needs more than ${options.maxMemoryMb ?? 1024} MB of memory to convert and was refused.`)
            : new ConversionError('corrupt', `The document could not be converted: ${err.message}.`),
        ),
      ),
    );
    worker.on('exit', (code) => finish(() => reject(new ConversionError('corrupt', `The conversion stopped unexpectedly (exit code ${code}).`))));
  });
}
