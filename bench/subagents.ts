import { performance } from 'node:perf_hooks';
import { startBenchPlatform } from './bench-platform.js';
import { PlatformApi } from './platform-api.js';
import type { BenchmarkResult } from './run.js';
import { ratio, round2, sampledResult, wholeNumberFromEnv } from './sampled.js';
import { benchmarkWithSettings } from './with-settings.js';

/**
 * What a subagent call costs (docs/subagents.md): a run whose one tool call runs another agent as a child
 * run, beside the runs it is made of, timed in the same rounds so drift in the machine's load hits all
 * of them alike. The scripted model takes no time, so what is measured is the platform.
 *
 * - `child-direct`: the child agent run on its own (POST /v1/agents/{id}/runs → run.completed): a
 *   calculator call, then text.
 * - `parent-with-calculator`: a parent of the same shape whose tool is the calculator: a tool call, then
 *   text — the parent without the subagent.
 * - `parent-with-subagent`: the same parent whose tool is the child agent (kind `agent`).
 *
 * The overhead of a subagent call is parent-with-subagent minus parent-with-calculator (what the child
 * run adds in place of a plain tool call), against child-direct (what the same run costs on its own).
 * BENCH_SUBAGENT_ROUNDS (default 40) rounds of one run of each, after BENCH_RUN_WARMUP (default 3).
 */

const SAMPLE_TIMEOUT_MS = 120_000;

interface SubagentSettings {
  rounds: number;
  warmup: number;
}

export const subagents = benchmarkWithSettings(
  'subagents',
  (): SubagentSettings => ({ rounds: wholeNumberFromEnv('BENCH_SUBAGENT_ROUNDS', 40, 1), warmup: wholeNumberFromEnv('BENCH_RUN_WARMUP', 3, 0) }),
  (s) => `${s.rounds} rounds of a direct run, a parent with a calculator and a parent with a subagent`,
  runSubagents,
);

async function runSubagents(settings: SubagentSettings): Promise<BenchmarkResult> {
  const bench = await startBenchPlatform('subagents');
  try {
    const api = new PlatformApi(bench.platform.apiUrl, bench.workspace.apiKey);
    const calculator = (await api.json('POST', '/v1/tools', { name: 'calculator', kind: 'builtin', builtin: 'calculator' }, [200, 201])).tool.id as string;
    const child = await api.publishAgent('bench-child', [
      { tool_calls: [{ tool: 'calculator', arguments: { expression: '6 * 7' } }] },
      { text: 'The answer is 42.' },
    ], [calculator]);
    const subagent = (await api.json('POST', '/v1/tools', { name: 'child', kind: 'agent', agent: { agent: child } }, [200, 201])).tool.id as string;
    const parentWith = (tool: string, args: Record<string, unknown>) => [{ tool_calls: [{ tool, arguments: args }] }, { text: 'Done.' }];
    const parentCalculator = await api.publishAgent('bench-parent-calculator', parentWith('calculator', { expression: '6 * 7' }), [calculator]);
    const parentSubagent = await api.publishAgent('bench-parent-subagent', parentWith('child', { input: 'What is 6 * 7?' }), [subagent]);

    const subjects = { direct: child, calculator: parentCalculator, subagent: parentSubagent };
    const latencies: Record<keyof typeof subjects, number[]> = { direct: [], calculator: [], subagent: [] };
    const errors: Record<keyof typeof subjects, number> = { direct: 0, calculator: 0, subagent: 0 };
    const keys = await api.keysFor((settings.rounds + settings.warmup) * 3);

    console.log(`[bench] subagents: ${settings.warmup} warm-up rounds, then ${settings.rounds} measured...`);
    for (let round = 0; round < settings.warmup + settings.rounds; round++) {
      for (const [name, agentId] of Object.entries(subjects) as Array<[keyof typeof subjects, string]>) {
        const t0 = performance.now();
        const response = await api.readStream('POST', `/v1/agents/${agentId}/runs`, keys.next(), { body: { input: 'What is 6 * 7?' }, timeoutMs: SAMPLE_TIMEOUT_MS });
        const last = response.frames.at(-1);
        if (round < settings.warmup) continue;
        if (response.status === 200 && last?.event === 'run.completed') latencies[name].push(last.at - t0);
        else if (++errors[name] <= 3) console.error(`[bench] ${name} run did not complete: ${response.status} ${last?.event}`);
      }
    }

    const measures = 'POST /v1/agents/{id}/runs sent → run.completed parsed';
    const direct = sampledResult({ name: 'child-direct', description: 'the child agent run directly: a calculator call, then text', measures }, latencies.direct, { errors: errors.direct });
    const withCalculator = sampledResult(
      { name: 'parent-with-calculator', description: 'a parent whose one tool call is the calculator, then text', measures },
      latencies.calculator,
      { errors: errors.calculator },
    );
    const withSubagent = sampledResult(
      { name: 'parent-with-subagent', description: 'the same parent whose one tool call runs the child agent as a child run (kind `agent`), then text', measures },
      latencies.subagent,
      { errors: errors.subagent },
    );
    const overheadP50 = withSubagent.latency_p50_ms - withCalculator.latency_p50_ms;
    return {
      database: bench.platform.databaseKind,
      settings: { rounds: settings.rounds, warmup_rounds: settings.warmup, sample_timeout_ms: SAMPLE_TIMEOUT_MS, order: 'rounds of child-direct, parent-with-calculator, parent-with-subagent' },
      details: {
        model: 'scripted, no delays',
        workers: 'in-process',
        subagent_call_overhead_p50_ms: round2(overheadP50),
      },
      subjects: [direct, withCalculator, withSubagent],
      ratios: {
        parent_with_subagent_p50_over_child_direct_p50: ratio(withSubagent.latency_p50_ms, direct.latency_p50_ms),
        subagent_call_overhead_p50_over_child_direct_p50: ratio(overheadP50, direct.latency_p50_ms),
        parent_with_subagent_p50_over_parent_with_calculator_p50: ratio(withSubagent.latency_p50_ms, withCalculator.latency_p50_ms),
      },
    };
  } finally {
    await bench.stop().catch((err) => console.error('[bench] cleanup:', err));
  }
}
