/**
 * Measures the candidate engines for tenants' regular expressions (docs/regex.md): each catastrophic
 * pattern family on a 20 000-character text, and ordinary patterns. Every case runs in a child process of
 * its own, killed after 10 s (a backtracking engine would run for years), so one case cannot skew another.
 *
 *   npm run build && node dist/scripts/measure-regex-engines.js
 *
 * `re2-wasm` is not a dependency: `npm install --no-save re2-wasm` first to measure it (it is skipped otherwise).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { RE2JS } from 're2js';
import { LinearRegex } from '../activities/regex/linear-regex.js';

const N = 20_000;
const KILL_AFTER_MS = 10_000;
const WORKER_DEADLINE_MS = 100;
/** Distinct variants of a pattern compiled to time compiling. */
const COMPILES = 200;

interface Case {
  name: string;
  pattern: string;
  flags: string;
  text: () => string;
  /** Matches timed and averaged (short texts need many to be measurable). */
  repeats: number;
}

const CASES: Case[] = [
  { name: 'nested', pattern: '(a+)+$', flags: 'u', text: () => `${'a'.repeat(N - 1)}!`, repeats: 1 },
  { name: 'alternation', pattern: '(a|a)*$', flags: 'u', text: () => `${'a'.repeat(N - 1)}!`, repeats: 1 },
  { name: 'alternation (overlap)', pattern: '(a|aa)*$', flags: 'u', text: () => `${'a'.repeat(N - 1)}!`, repeats: 1 },
  { name: 'polynomial n⁴', pattern: '\\d*\\d*\\d*$', flags: 'u', text: () => `${'1'.repeat(N - 1)}a`, repeats: 1 },
  { name: 'polynomial n⁵', pattern: 'a*a*a*a*b', flags: 'u', text: () => 'a'.repeat(N), repeats: 1 },
  { name: 'backreference', pattern: '(a*)\\1b', flags: 'u', text: () => 'a'.repeat(N), repeats: 1 },
  { name: 'literal, 20k prose', pattern: 'secret-\\d+', flags: 'i', text: () => `${'lorem ipsum dolor '.repeat(1100)}SECRET-42`, repeats: 200 },
  { name: 'words, 20k prose', pattern: '\\b(?:password|token)\\b', flags: 'i', text: () => `${'lorem ipsum dolor '.repeat(1100)}token`, repeats: 200 },
  { name: 'e-mail, short', pattern: '^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$', flags: 'u', text: () => 'ada.lovelace@example.com', repeats: 100_000 },
  { name: 'phone, short', pattern: '^\\d{3}-\\d{4}$', flags: 'u', text: () => '555-1234', repeats: 100_000 },
];

const ENGINES = ['v8-backtracking', 'v8-linear', 'v8-linear-without-u-i', 'v8-linear-fallback', 're2-wasm', 're2js', 'linear-regex', 'worker-deadline'] as const;
type Engine = (typeof ENGINES)[number];
type Test = (text: string) => boolean;

/** Compiles `pattern` on one engine (in this process, which runs only this case). */
async function compiler(engine: Engine): Promise<(pattern: string, flags: string) => Test> {
  switch (engine) {
    case 'v8-backtracking':
      return (pattern, flags) => regExpTest(new RegExp(pattern, flags));
    case 'v8-linear':
      v8.setFlagsFromString('--enable-experimental-regexp-engine');
      return (pattern, flags) => regExpTest(new RegExp(pattern, `${flags}l`));
    case 'v8-linear-without-u-i':
      // Its speed where it runs at all: it refuses the `u` and `i` flags.
      v8.setFlagsFromString('--enable-experimental-regexp-engine');
      return (pattern, flags) => regExpTest(new RegExp(pattern, `${flags.replace(/[ui]/g, '')}l`));
    case 'v8-linear-fallback':
      v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
      return (pattern, flags) => regExpTest(new RegExp(pattern, flags));
    case 're2-wasm': {
      const moduleName = 're2-wasm';
      const { RE2 } = (await import(moduleName)) as { RE2: new (pattern: string, flags: string) => { test: Test } };
      return (pattern, flags) => {
        const re = new RE2(pattern, flags.includes('u') ? flags : `${flags}u`);
        return (text) => re.test(text);
      };
    }
    case 're2js':
      return (pattern, flags) => {
        const re = RE2JS.compile(RE2JS.translateRegExp(pattern), flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
        return (text) => re.test(text);
      };
    case 'linear-regex':
      return (pattern, flags) => {
        const re = LinearRegex.compile(pattern, flags);
        return (text) => re.test(text);
      };
    case 'worker-deadline':
      return workerWithDeadline();
  }
}

function regExpTest(re: RegExp): Test {
  return (text) => re.test(text);
}

/** V8's engine in a worker thread, asked synchronously (Ajv's `test` must be), given WORKER_DEADLINE_MS per match. */
async function workerWithDeadline(): Promise<(pattern: string, flags: string) => Test> {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const source = `
    const { parentPort, workerData: cell } = require('node:worker_threads');
    parentPort.on('message', ({ pattern, flags, text }) => {
      const matched = new RegExp(pattern, flags).test(text);
      Atomics.store(cell, 0, matched ? 1 : 2);
      Atomics.notify(cell, 0);
    });`;
  const worker = new Worker(source, { eval: true, workerData: cell });
  await new Promise((resolve) => worker.once('online', resolve));
  return (pattern, flags) => (text) => {
    Atomics.store(cell, 0, 0);
    worker.postMessage({ pattern, flags, text });
    if (Atomics.wait(cell, 0, 0, WORKER_DEADLINE_MS) === 'timed-out') {
      void worker.terminate();
      throw new Error(`no answer within ${WORKER_DEADLINE_MS} ms (worker terminated)`);
    }
    return Atomics.load(cell, 0) === 1;
  };
}

/** One case on one engine; prints `{compileMs, matchMs, matched}` or `{error}` as JSON. */
async function measureOne(engine: Engine, item: Case): Promise<void> {
  const result: Record<string, unknown> = {};
  try {
    const compile = await compiler(engine);
    compile('warm', engine.startsWith('v8-linear') ? '' : 'u')('warm up');
    // Compiling includes a first match: V8 compiles a RegExp's code on its first use.
    let started = performance.now();
    for (let i = 0; i < COMPILES; i++) compile(`${item.pattern}|z${i}`, item.flags)('x');
    result.compileMs = (performance.now() - started) / COMPILES;
    const test = compile(item.pattern, item.flags);
    const text = item.text();
    const repeats = engine === 'worker-deadline' ? Math.min(item.repeats, 1000) : item.repeats;
    if (repeats > 1) test(text);
    started = performance.now();
    let matched = false;
    for (let i = 0; i < repeats; i++) matched = test(text);
    result.matchMs = (performance.now() - started) / repeats;
    result.matched = matched;
  } catch (err) {
    result.error = err instanceof Error ? err.message : String(err);
  }
  process.stdout.write(JSON.stringify(result), () => process.exit(0));
}

const run = promisify(execFile);

async function measureAll(): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  const compileTimes: string[] = [];
  console.log('Time per match:\n');
  console.log(`| case | ${ENGINES.join(' | ')} |`);
  console.log(`|---|${ENGINES.map(() => '---').join('|')}|`);
  for (const [index, item] of CASES.entries()) {
    const cells: string[] = [];
    for (const engine of ENGINES) {
      const { stdout } = await run(process.execPath, [script, engine, String(index)], { timeout: KILL_AFTER_MS }).catch(() => ({ stdout: '' }));
      cells.push(cell(stdout, 'matchMs'));
      if (index === CASES.length - 2) compileTimes.push(cell(stdout, 'compileMs'));
    }
    console.log(`| ${item.name} \`/${item.pattern}/${item.flags}\` | ${cells.join(' | ')} |`);
  }
  console.log(`\nTime to compile \`/${CASES.at(-2)!.pattern}/\` and match once (mean of ${COMPILES} variants):\n`);
  console.log(`| ${ENGINES.join(' | ')} |\n|${ENGINES.map(() => '---').join('|')}|\n| ${compileTimes.join(' | ')} |`);
}

function cell(stdout: string, figure: 'matchMs' | 'compileMs'): string {
  if (!stdout) return `killed after ${KILL_AFTER_MS / 1000} s`;
  const result = JSON.parse(stdout) as { matchMs?: number; compileMs?: number; error?: string };
  if (result.error === undefined) return formatMs(result[figure]!);
  if (/linear time|invalid escape|backreference/i.test(result.error)) return 'refused';
  if (/no answer within/.test(result.error)) return `deadline (${WORKER_DEADLINE_MS} ms) hit`;
  if (/Cannot find (package|module)/.test(result.error)) return 'not installed';
  return `error: ${result.error.slice(0, 80)}`;
}

/** How V8's backtracking grows with the text, where it still ends: what the killed cells above would take. */
function measureGrowth(): void {
  const families = [
    { pattern: '^(a+)+$', text: (n: number) => `${'a'.repeat(n - 1)}!`, sizes: [22, 25, 28] },
    { pattern: '\\d*\\d*\\d*$', text: (n: number) => `${'1'.repeat(n - 1)}a`, sizes: [125, 250, 500] },
  ];
  console.log('\nV8 backtracking on shorter texts:\n\n| pattern | characters | time |\n|---|---|---|');
  for (const family of families) {
    for (const size of family.sizes) {
      const started = performance.now();
      new RegExp(family.pattern, 'u').test(family.text(size));
      console.log(`| \`/${family.pattern}/u\` | ${size} | ${formatMs(performance.now() - started)} |`);
    }
  }
}

function formatMs(ms: number): string {
  return ms >= 1 ? `${ms.toFixed(1)} ms` : `${(ms * 1000).toFixed(ms >= 0.01 ? 1 : 2)} µs`;
}

const [engine, index] = process.argv.slice(2);
if (engine === undefined) {
  await measureAll();
  measureGrowth();
}
else await measureOne(engine as Engine, CASES[Number(index)]!);
