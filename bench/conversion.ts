import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { ConversionError, convertToMarkdown, sniffFormat } from '../activities/conversion/index.js';
import type { BenchmarkResult } from './run.js';
import { median, printTable, ratio, round2, sampledResult, wholeNumberFromEnv } from './sampled.js';
import { check, norm, type Expectation } from '../test/support/corpus.js';
import { benchmarkWithSettings } from './with-settings.js';

/**
 * Document conversion on the real-document corpus (../shared/corpus/documents): our converter beside
 * markitdown (microsoft/markitdown, Python), file by file, with both converters' pass rates against the
 * corpus's expectations.json.
 *
 * FILES: every file listed in expectations.json that exists in the corpus folder (BENCH_CORPUS_DIR, else
 * ../shared/corpus/documents beside the project); without the folder the benchmark records a skipped
 * result with a note. A file's `setup` (the /tmp file rlink.docx must not leak) is written first, as the
 * corpus test does.
 *
 * OURS, in this process: read the file, `sniffFormat(bytes, filename)`, then `convertToMarkdown` (which
 * decodes text formats itself) — what `convertDocument` and the upload path do, default limits.
 * MARKITDOWN: `markitdown[all]` from PyPI in a virtualenv at
 * `${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/markitdown-venv` (BENCH_MARKITDOWN_VENV), created and
 * installed by this benchmark when it is missing (idempotent: an importable markitdown is left as it is;
 * BENCH_MARKITDOWN_SPEC changes what is installed). When Python, venv or pip fail, markitdown is skipped
 * with a note and only our figures are recorded. bench/markitdown-convert.py converts every file in one
 * Python process (`MarkItDown().convert(path)`), so interpreter start-up and imports are not counted per
 * file; they are recorded apart.
 *
 * TIMING: each side converts every file BENCH_CONVERSION_WARMUP times unmeasured (default 1: lazy imports
 * and JIT warm-up), then BENCH_CONVERSION_REPEAT times measured (default 1); a file's time is the median
 * of its measured passes, path in → Markdown (or the error) out. Files are converted one at a time, one
 * converter after the other, never both at once.
 *
 * PASS RATES (the same rules for both; markitdownSpecific strings are ignored):
 * - outcome `ok`: converts, and the checks of test/conversion-corpus.test.ts hold — `must` (or its
 *   `relaxed` form) present, `mustNot` absent, `mustNotLine` not a whole line, `regex` matches,
 *   `headings` on heading lines, `tableCells` on table rows, `listItems` on list-item lines (and
 *   `listItemCount`), `notes` under a "Notes:" block, `headingLevelsRelative` in order.
 * - outcome `fail`: the conversion fails. Ours throws (its ConversionError kind is recorded beside the
 *   expected one); markitdown passes when it raises or returns no text, which is what keeps a file out
 *   of the index there (it has no notion of refusing a scanned PDF).
 * - outcome `optional`: either fails, or converts with the checks holding.
 * A LENIENT rate is recorded too: the same strings only need to appear somewhere (no line kinds, counts,
 * regexes or heading levels).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = path.join(ROOT, 'bench', 'markitdown-convert.py');
/** The whole markitdown process (all files, all passes). */
const MARKITDOWN_TIMEOUT_MS = 30 * 60_000;
const PIP_TIMEOUT_MS = 20 * 60_000;

interface ConversionSettings {
  corpus: string;
  warmup: number;
  repeat: number;
  venv: string;
  spec: string;
}

function conversionSettings(): ConversionSettings {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(process.env.HOME || os.homedir(), '.cache');
  return {
    corpus: path.resolve(process.env.BENCH_CORPUS_DIR || path.join(ROOT, '..', 'shared', 'corpus', 'documents')),
    warmup: wholeNumberFromEnv('BENCH_CONVERSION_WARMUP', 1, 0),
    repeat: wholeNumberFromEnv('BENCH_CONVERSION_REPEAT', 1, 1),
    venv: path.resolve(process.env.BENCH_MARKITDOWN_VENV || path.join(cacheHome, 'agent-platform', 'markitdown-venv')),
    spec: process.env.BENCH_MARKITDOWN_SPEC || 'markitdown[all]',
  };
}

export const conversion = benchmarkWithSettings(
  'conversion',
  conversionSettings,
  (s) => `corpus files through our converter and markitdown, ${s.warmup} warm-up + ${s.repeat} measured pass(es) each`,
  runConversion,
);

/** One converter's answer for one file. */
interface Converted {
  ms: number;
  markdown: string | null;
  error: string | null;
  /** Ours: the ConversionError kind. */
  kind?: string;
}

interface Verdict {
  pass: boolean;
  lenient: boolean;
  problems: string[];
}

async function runConversion(settings: ConversionSettings): Promise<BenchmarkResult> {
  const recordSettings = {
    corpus: settings.corpus,
    warmup_passes: settings.warmup,
    measured_passes: settings.repeat,
    load_generator: { tool: 'one file at a time; ours in this process, markitdown in one Python process', worker_threads: 0 },
  };
  const expectationsFile = path.join(settings.corpus, 'expectations.json');
  if (!fs.existsSync(expectationsFile)) {
    const reason = `the corpus folder ${settings.corpus} (expectations.json) is not there; set BENCH_CORPUS_DIR or check out ../shared`;
    console.log(`[bench] conversion: SKIPPED. ${reason}`);
    return { database: 'none', settings: recordSettings, details: { skipped: true, reason }, subjects: [], ratios: {} };
  }
  const { files: listed } = JSON.parse(fs.readFileSync(expectationsFile, 'utf8')) as { files: Expectation[] };
  const expectations = listed.filter((e) => fs.existsSync(path.join(settings.corpus, e.file)));
  const missing = listed.filter((e) => !expectations.includes(e)).map((e) => e.file);
  if (missing.length) console.log(`[bench] note: ${missing.length} listed file(s) not in the corpus folder: ${missing.join(', ')}`);
  const paths = expectations.map((e) => path.join(settings.corpus, e.file));

  const written: string[] = [];
  try {
    for (const e of expectations) {
      // The file a vulnerable converter would leak (CVE-2025-11849); it must not reach the output.
      if (e.setup && e.setup.writeFile.startsWith('/tmp/') && !fs.existsSync(e.setup.writeFile)) {
        fs.writeFileSync(e.setup.writeFile, e.setup.content);
        written.push(e.setup.writeFile);
      }
    }

    console.log(`[bench] ours: ${expectations.length} files, ${settings.warmup} warm-up + ${settings.repeat} measured pass(es)...`);
    const ours = await convertOurs(paths, settings.warmup, settings.repeat);

    const md = await convertMarkitdown(paths, settings);

    // ---- verdicts ----
    const rows = expectations.map((e, i) => {
      const o = ours[i]!;
      const m = 'skipped' in md ? undefined : md.files[i]!;
      return { e, ours: o, oursVerdict: verdict(e, o), md: m, mdVerdict: m ? verdict(e, m) : undefined };
    });

    printTable([
      ['file', 'outcome', 'ours ms', 'ours', 'markitdown ms', 'markitdown'],
      ...rows.map((r) => [
        r.e.file,
        r.e.outcome + (r.e.failKind ? `(${r.e.failKind})` : ''),
        r.ours.ms.toFixed(1),
        mark(r.oursVerdict, r.ours),
        r.md ? r.md.ms.toFixed(1) : '-',
        r.md && r.mdVerdict ? mark(r.mdVerdict, r.md) : '-',
      ]),
    ]);

    const oursTimes = rows.map((r) => r.ours.ms);
    const oursPass = rows.filter((r) => r.oursVerdict.pass).length;
    const oursLenient = rows.filter((r) => r.oursVerdict.lenient).length;
    const n = rows.length;
    const oursSubject = sampledResult(
      {
        name: 'agent-platform',
        description: 'our converter in process: sniffFormat(bytes, filename) then convertToMarkdown (text formats decoded), default limits',
        measures: `file path → Markdown or rejection, every corpus file (rejections included); median of ${settings.repeat} measured pass(es) per file`,
      },
      oursTimes,
    );
    const summary = [
      ['converter', 'files', 'median ms', 'total ms', 'pass', 'lenient pass'],
      ['agent-platform', String(n), median(oursTimes).toFixed(1), sum(oursTimes).toFixed(0), `${oursPass}/${n}`, `${oursLenient}/${n}`],
    ];
    const byOutcome = (verdictOf: (r: (typeof rows)[number]) => Verdict | undefined) =>
      Object.fromEntries(
        (['ok', 'fail', 'optional'] as const).map((outcome) => {
          const of = rows.filter((r) => r.e.outcome === outcome);
          return [outcome, `${of.filter((r) => verdictOf(r)?.pass).length}/${of.length}`];
        }),
      );

    const details: Record<string, unknown> = {
      files_listed: listed.length,
      files_measured: n,
      files_missing: missing,
      agent_platform: {
        pass: oursPass,
        pass_rate: round3(oursPass / n),
        lenient_pass: oursLenient,
        lenient_pass_rate: round3(oursLenient / n),
        pass_by_outcome: byOutcome((r) => r.oursVerdict),
        fail_kind_matches: rows.filter((r) => r.e.outcome === 'fail' && r.ours.kind === r.e.failKind).length,
        fail_files: rows.filter((r) => r.e.outcome === 'fail').length,
        total_ms: round2(sum(oursTimes)),
        median_ms: round2(median(oursTimes)),
      },
    };
    const subjects = [oursSubject];
    const ratios: Record<string, number> = {};

    if ('skipped' in md) {
      details.markitdown = { skipped: true, reason: md.skipped };
      console.log(`[bench] markitdown: SKIPPED. ${md.skipped}`);
    } else {
      const mdTimes = rows.map((r) => r.md!.ms);
      const mdPass = rows.filter((r) => r.mdVerdict!.pass).length;
      const mdLenient = rows.filter((r) => r.mdVerdict!.lenient).length;
      subjects.push(
        sampledResult(
          {
            name: 'markitdown',
            description: `baseline: markitdown ${md.version} (Python ${md.python}), MarkItDown().convert(path) in one Python process`,
            measures: `file path → Markdown or exception, every corpus file; median of ${settings.repeat} measured pass(es) per file; start-up and import excluded`,
          },
          mdTimes,
        ),
      );
      summary.push(['markitdown', String(n), median(mdTimes).toFixed(1), sum(mdTimes).toFixed(0), `${mdPass}/${n}`, `${mdLenient}/${n}`]);
      details.markitdown = {
        version: md.version,
        python: md.python,
        venv: settings.venv,
        installed_by_this_run: md.installed,
        import_ms: md.importMs,
        init_ms: md.initMs,
        process_wall_s: round2(md.wallMs / 1000),
        pass: mdPass,
        pass_rate: round3(mdPass / n),
        lenient_pass: mdLenient,
        lenient_pass_rate: round3(mdLenient / n),
        pass_by_outcome: byOutcome((r) => r.mdVerdict),
        total_ms: round2(sum(mdTimes)),
        median_ms: round2(median(mdTimes)),
      };
      const perFile = rows.filter((r) => r.ours.ms > 0 && r.md!.ms > 0).map((r) => Math.log(r.ours.ms / r.md!.ms));
      Object.assign(ratios, {
        median_ms: ratio(median(oursTimes), median(mdTimes)),
        total_ms: ratio(sum(oursTimes), sum(mdTimes)),
        geomean_per_file_ms: perFile.length ? Math.round(Math.exp(sum(perFile) / perFile.length) * 1000) / 1000 : NaN,
        pass_rate: ratio(oursPass, mdPass),
        lenient_pass_rate: ratio(oursLenient, mdLenient),
      });
    }
    details.files = rows.map((r) => ({
      file: r.e.file,
      outcome: r.e.outcome,
      ...(r.e.failKind && { fail_kind: r.e.failKind }),
      agent_platform: fileRecord(r.ours, r.oursVerdict),
      ...(r.md && r.mdVerdict && { markitdown: fileRecord(r.md, r.mdVerdict) }),
    }));

    console.log('');
    printTable(summary);
    return { database: 'none', settings: { ...recordSettings, markitdown_spec: settings.spec }, details, subjects, ratios };
  } finally {
    for (const file of written) fs.rmSync(file, { force: true });
  }
}

function fileRecord(c: Converted, v: Verdict) {
  return {
    ms: round2(c.ms),
    converted: c.markdown !== null && c.error === null,
    chars: c.markdown?.length ?? 0,
    ...(c.error && { error: c.error.slice(0, 300) }),
    ...(c.kind && { kind: c.kind }),
    pass: v.pass,
    lenient_pass: v.lenient,
    ...(v.problems.length && { problems: v.problems.slice(0, 10) }),
  };
}

function mark(v: Verdict, c: Converted): string {
  const what = c.error !== null ? `rejected${c.kind ? `:${c.kind}` : ''}` : c.markdown?.trim() ? 'md' : 'empty';
  return `${v.pass ? 'pass' : v.lenient ? 'lenient' : 'FAIL'} ${what}`;
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

// ---- our converter ----

async function convertOurs(paths: string[], warmup: number, repeat: number): Promise<Converted[]> {
  const times: number[][] = paths.map(() => []);
  const last: Converted[] = [];
  for (let pass = 0; pass < warmup + repeat; pass++) {
    for (let i = 0; i < paths.length; i++) {
      const t0 = performance.now();
      let markdown: string | null = null;
      let error: string | null = null;
      let kind: string | undefined;
      try {
        const bytes = new Uint8Array(await fs.promises.readFile(paths[i]!));
        // convertDocument's two steps: what the format is, then its conversion.
        const sniff = await sniffFormat(bytes, path.basename(paths[i]!));
        if (sniff.format === 'unsupported') throw sniff.failure ?? new ConversionError('unsupported', 'This file is not a supported document format.');
        markdown = (await convertToMarkdown(bytes, sniff.format)).markdown;
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
        kind = err instanceof ConversionError ? err.kind : 'unexpected';
      }
      const ms = performance.now() - t0;
      if (pass >= warmup) times[i]!.push(ms);
      if (pass === warmup + repeat - 1) last[i] = { ms: 0, markdown, error, kind };
    }
  }
  return last.map((c, i) => ({ ...c, ms: median(times[i]!) }));
}

// ---- markitdown ----

type MarkitdownRun =
  | { skipped: string }
  | { version: string; python: string; installed: boolean; importMs: number; initMs: number; wallMs: number; files: Converted[] };

async function convertMarkitdown(paths: string[], settings: ConversionSettings): Promise<MarkitdownRun> {
  const setup = await ensureMarkitdown(settings);
  if ('skipped' in setup) return setup;
  const outDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'agent-platform-markitdown-'));
  try {
    console.log(`[bench] markitdown: ${paths.length} files, ${settings.warmup} warm-up + ${settings.repeat} measured pass(es) in one Python process...`);
    const t0 = performance.now();
    const job = JSON.stringify({ files: paths, out_dir: outDir, warmup: settings.warmup, repeat: settings.repeat });
    const run = await runCommand(setup.python, [SCRIPT], { input: job, timeoutMs: MARKITDOWN_TIMEOUT_MS });
    const wallMs = performance.now() - t0;
    const resultFile = path.join(outDir, 'result.json');
    if (run.code !== 0 || !fs.existsSync(resultFile)) {
      return { skipped: `the markitdown script failed (exit ${run.code}${run.timedOut ? ', timed out' : ''}): ${tail(run.stderr || run.stdout)}` };
    }
    const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as {
      version: string;
      python: string;
      import_ms: number;
      init_ms: number;
      files: Array<{ file: string; times_ms: number[]; error: string | null; chars: number }>;
    };
    const files = result.files.map((f, i): Converted => {
      const text = fs.readFileSync(path.join(outDir, `${i}.md`), 'utf8');
      // No text is markitdown's way of not converting (a scanned PDF gives an empty string).
      const error = f.error ?? (text.trim() ? null : 'no text (empty output)');
      return { ms: median(f.times_ms), markdown: f.error ? null : text, error };
    });
    return { version: result.version, python: result.python, installed: setup.installed, importMs: result.import_ms, initMs: result.init_ms, wallMs, files };
  } finally {
    await fs.promises.rm(outDir, { recursive: true, force: true });
  }
}

/** The venv's python with markitdown importable, installing it when needed; or why not. */
async function ensureMarkitdown(settings: ConversionSettings): Promise<{ python: string; installed: boolean } | { skipped: string }> {
  const python = path.join(settings.venv, 'bin', 'python');
  const importable = async () => fs.existsSync(python) && (await runCommand(python, ['-c', 'import markitdown'], { timeoutMs: 120_000 })).code === 0;
  if (await importable()) return { python, installed: false };

  const system = process.env.PYTHON || 'python3';
  if (!fs.existsSync(python)) {
    console.log(`[bench] markitdown: creating a virtualenv in ${settings.venv}...`);
    await fs.promises.mkdir(path.dirname(settings.venv), { recursive: true });
    const venv = await runCommand(system, ['-m', 'venv', settings.venv], { timeoutMs: 300_000 });
    if (venv.code !== 0) return { skipped: `could not create a virtualenv with ${system} -m venv (exit ${venv.code}): ${tail(venv.stderr)}` };
  }
  console.log(`[bench] markitdown: pip install '${settings.spec}' from PyPI (once; this can take a few minutes)...`);
  const pip = await runCommand(python, ['-m', 'pip', 'install', '--disable-pip-version-check', '--quiet', settings.spec], { timeoutMs: PIP_TIMEOUT_MS });
  if (pip.code !== 0) return { skipped: `pip install '${settings.spec}' failed (exit ${pip.code}${pip.timedOut ? ', timed out' : ''}): ${tail(pip.stderr || pip.stdout)}` };
  if (!(await importable())) return { skipped: `markitdown is still not importable after pip install '${settings.spec}'` };
  return { python, installed: true };
}

function tail(text: string): string {
  const lines = text.trim().split('\n');
  return lines.slice(-5).join(' | ').slice(-800) || '(no output)';
}

/** Runs a command to its end (never through a shell), feeding `input` to its stdin. */
function runCommand(
  command: string,
  args: string[],
  options: { input?: string; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-100_000)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-100_000)));
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${err.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => {}); // a child that exits early closes its stdin
    child.stdin.end(options.input ?? '');
  });
}

// ---- expectations (test/support/corpus.ts's checks, for any converter's output) ----

function verdict(e: Expectation, c: Converted): Verdict {
  const failed = c.error !== null || c.markdown === null || !c.markdown.trim();
  if (e.outcome === 'fail') {
    return failed ? { pass: true, lenient: true, problems: [] } : { pass: false, lenient: false, problems: ['converted a file that should have been refused'] };
  }
  if (failed) {
    if (e.outcome === 'optional') return { pass: true, lenient: true, problems: [] };
    return { pass: false, lenient: false, problems: [`did not convert: ${c.error ?? 'empty output'}`] };
  }
  const problems = check(c.markdown!, e);
  return { pass: problems.length === 0, lenient: lenientProblems(c.markdown!, e).length === 0, problems };
}

/** Only that the expected strings appear somewhere and the forbidden ones do not. */
function lenientProblems(markdown: string, e: Expectation): string[] {
  const md = e.stripBackslashes ? markdown.replace(/\\/g, '') : markdown;
  const text = norm(md);
  const wanted = [
    ...(e.relaxed?.must ?? e.must ?? []),
    ...(e.relaxed?.headings ?? e.headings ?? []),
    ...(e.relaxed?.listItems ?? e.listItems ?? []),
    ...(e.tableCells ?? []),
    ...(e.notes ?? []),
  ];
  return [
    ...wanted.filter((s) => !text.includes(norm(s))).map((s) => `missing text: ${JSON.stringify(s)}`),
    ...(e.mustNot ?? []).filter((s) => md.includes(s) || text.includes(norm(s))).map((s) => `forbidden text present: ${JSON.stringify(s)}`),
  ];
}
