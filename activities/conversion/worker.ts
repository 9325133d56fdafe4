import { parentPort, workerData } from 'node:worker_threads';
import { convertToMarkdown } from './convert.js';
import type { DocumentFormat } from './detect.js';
import { isConversionError } from './errors.js';

/**
 * Worker-thread entry of {@link convertToMarkdownIsolated}: converts one document and posts the
 * result (or the ConversionError's kind and message) back. Started by isolated.ts only.
 */

interface Job {
  bytes: Uint8Array;
  format: DocumentFormat;
  options: { maxMs?: number; maxUncompressedBytes?: number; maxCompressionRatio?: number; contentType?: string };
}

const job = workerData as Job;
try {
  const result = await convertToMarkdown(job.bytes, job.format, job.options);
  parentPort?.postMessage({ ok: true, result });
} catch (err) {
  parentPort?.postMessage(
    isConversionError(err)
      ? { ok: false, kind: err.kind, message: err.message }
      : { ok: false, kind: 'corrupt', message: `The document could not be converted: ${err instanceof Error ? err.message : String(err)}.` },
  );
}
