import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Timed GETs from a process of their own, as a real client's would be.
 *
 * Why not from the benchmark's process: with responses of megabytes (an experiment's results matrix),
 * reading them in the process that also serves them puts the reader's buffers and garbage collection
 * into the server's latency. Measured on 2 cores at 5,000 cells: p95 60–80 ms read in-process against
 * 31 ms from a separate process, for the same server.
 *
 * Run as a script: `node timed-gets.js <base url> <key> <rounds> <path>...`; each round GETs every path
 * once, in order, each timed from the request to its body read; prints `{ ms: number[][], bytes: number[] }`.
 */

export interface TimedGets {
  /** Per path (in the order given), the milliseconds of each round. */
  ms: number[][];
  /** Per path, the body's size in the last round. */
  bytes: number[];
}

/** Runs the rounds in a child process and answers what it measured. */
export async function timedGetsInChildProcess(options: { url: string; key: string; rounds: number; paths: string[] }): Promise<TimedGets> {
  const script = fileURLToPath(import.meta.url);
  const { stdout } = await promisify(execFile)(process.execPath, [script, options.url, options.key, String(options.rounds), ...options.paths], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(stdout) as TimedGets;
}

async function measure(url: string, key: string, rounds: number, paths: string[]): Promise<TimedGets> {
  const result: TimedGets = { ms: paths.map(() => []), bytes: paths.map(() => 0) };
  for (let round = 0; round < rounds; round++) {
    for (const [i, path] of paths.entries()) {
      const t0 = performance.now();
      const response = await fetch(url + path, { headers: { authorization: `Bearer ${key}` } });
      const body = await response.arrayBuffer();
      result.ms[i]!.push(performance.now() - t0);
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
      result.bytes[i] = body.byteLength;
    }
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url, key, rounds, ...paths] = process.argv.slice(2);
  process.stdout.write(JSON.stringify(await measure(url!, key!, Number(rounds), paths)));
}
