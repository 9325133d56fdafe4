import { parseFrame, sseBlocks, type SseFrame } from './sse.js';

const TERMINAL = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** What one client saw following a run to its end, across however many connections that took. */
export interface FollowedRun {
  runId: string;
  /** Every frame received, in order, duplicates included (a correct server sends none). */
  frames: SseFrame[];
  /** When each frame arrived (Date.now()). */
  frameTimes: number[];
  /** Connections after the first, each resuming with Last-Event-ID. */
  reconnects: number;
  /** Reconnection attempts answered with an error or refused (the server or its database down). */
  failedAttempts: number;
  /** For each break: ms from the connection ending to the next frame arriving. */
  resumeMs: number[];
}

export interface FollowOptions {
  baseUrl: string;
  key: string;
  /** Give up (and fail) after this long. */
  deadlineMs?: number;
  /** Called with each frame as it arrives. */
  onFrame?: (frame: SseFrame) => void;
  /** When this settles, the client hangs up once (as a dropped connection would) and then resumes. */
  hangUpAt?: Promise<unknown>;
}

/**
 * Follows a run's event stream like a well-behaved EventSource: when the connection ends before a
 * terminal event (or is refused), it waits a moment and reconnects with Last-Event-ID, again and again
 * until the run ends or the deadline passes. `start` is the first request: POST /v1/agents/{id}/runs
 * (the run id comes from its first frame) or GET /v1/runs/{id}/events.
 */
export async function followRun(start: { agentId: string; input: string } | { runId: string }, options: FollowOptions): Promise<FollowedRun> {
  const deadline = Date.now() + (options.deadlineMs ?? 120_000);
  const frames: SseFrame[] = [];
  const frameTimes: number[] = [];
  const resumeMs: number[] = [];
  let current: AbortController | undefined;
  void options.hangUpAt?.then(() => current?.abort());
  let runId = 'runId' in start ? start.runId : undefined;
  let reconnects = 0;
  let failedAttempts = 0;
  let brokeAt: number | undefined;
  let first = true;

  while (Date.now() < deadline) {
    const lastId = frames.at(-1)?.id;
    const request: RequestInit & { headers: Record<string, string> } = { headers: { authorization: `Bearer ${options.key}` } };
    let url: string;
    if (first && 'agentId' in start) {
      url = `${options.baseUrl}/v1/agents/${start.agentId}/runs`;
      request.method = 'POST';
      request.headers['content-type'] = 'application/json';
      request.body = JSON.stringify({ input: start.input });
    } else {
      if (!runId) throw new Error('the run-starting stream ended before run.created');
      url = `${options.baseUrl}/v1/runs/${runId}/events`;
      if (lastId !== undefined) request.headers['last-event-id'] = String(lastId);
    }
    if (!first) reconnects++;
    first = false;
    const controller = (current = new AbortController());
    const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - Date.now()));
    try {
      const response = await fetch(url, { ...request, signal: controller.signal });
      if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
        if (runId === undefined) throw new Error(`starting the run answered ${response.status}: ${await response.text()}`);
        await response.body?.cancel();
        failedAttempts++;
      } else {
        for await (const block of sseBlocks(response.body as AsyncIterable<Uint8Array>)) {
          if (block.startsWith(':')) continue;
          const frame = parseFrame(block);
          if (brokeAt !== undefined) {
            resumeMs.push(Date.now() - brokeAt);
            brokeAt = undefined;
          }
          runId ??= frame.data.run_id;
          frames.push(frame);
          frameTimes.push(Date.now());
          options.onFrame?.(frame);
        }
      }
    } catch (err) {
      if (runId === undefined) throw err;
      // a refused or cut connection (or the hang-up asked for) is a break, resumed below; the deadline is not
      if (controller.signal.aborted && Date.now() >= deadline) break;
    } finally {
      clearTimeout(timer);
    }
    if (TERMINAL.has(frames.at(-1)?.event ?? '')) return { runId: runId!, frames, frameTimes, reconnects, failedAttempts, resumeMs };
    brokeAt ??= Date.now();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`run ${runId} did not end within the deadline; ${frames.length} frames, last ${frames.at(-1)?.event} (id ${frames.at(-1)?.id})`);
}
