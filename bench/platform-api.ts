import { performance } from 'node:perf_hooks';
import { parseFrame, sseBlocks, type SseFrame } from '../test/support/sse.js';

/**
 * The platform's API over HTTP as the benchmarks drive it: setup with the workspace's management key,
 * runs with standard keys of their own (the run endpoint allows 60 requests per 60 s per key).
 */

/** Runs per API key, under the run endpoint's 60 per 60 s. */
export const KEY_USES = 50;

/** Keys to spread run requests over: round-robin, none used more than KEY_USES times. */
export interface KeyRing {
  next(): string;
}

export interface TimedFrame extends SseFrame {
  /** performance.now() when the frame was parsed. */
  at: number;
}

export interface TimedStream {
  status: number;
  frames: TimedFrame[];
  /** The body when the answer was not an event stream. */
  body?: string;
}

/** A one-node graph running `script` on the scripted model. */
export function scriptedGraph(script: unknown[], toolRefs: string[] = []) {
  return { nodes: [{ id: 'main', model: 'scripted', toolRefs, script }] };
}

export class PlatformApi {
  keysCreated = 0;

  constructor(
    readonly url: string,
    /** The workspace's management key: setup and new keys (never runs, so its own limit is untouched). */
    protected readonly managementKey: string,
    /** Names the keys keysFor creates: `<keyName>-0`, `<keyName>-1`, … */
    private readonly keyName = 'bench',
  ) {}

  /** An agent whose published version is a one-node graph running `script` on the scripted model. */
  async publishAgent(name: string, script: unknown[], toolRefs: string[] = []): Promise<string> {
    const agent = await this.json('POST', '/v1/agents', { name }, [201]);
    await this.json('POST', `/v1/agents/${agent.agent.id}/versions`, { graph: scriptedGraph(script, toolRefs) }, [201]);
    return agent.agent.id;
  }

  /** Fresh standard keys enough for `uses` run requests. */
  async keysFor(uses: number): Promise<KeyRing> {
    const keys: string[] = [];
    for (let i = 0; i < Math.ceil(uses / KEY_USES); i++) {
      const body = await this.json('POST', '/v1/api-keys', { kind: 'standard', name: `${this.keyName}-${i}` }, [201]);
      keys.push(body.key);
      this.keysCreated++;
    }
    let used = 0;
    return {
      next: () => {
        if (used >= uses) throw new Error(`more than the ${uses} runs these keys were made for`);
        return keys[used++ % keys.length]!;
      },
    };
  }

  /** Sends a request whose answer is an SSE stream and reads it to its end, timing each frame as it is parsed. */
  async readStream(
    method: string,
    path: string,
    key: string,
    options: { body?: unknown; headers?: Record<string, string>; timeoutMs: number; onFrame?: (frame: TimedFrame) => void },
  ): Promise<TimedStream> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(this.url + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return { status: response.status, frames: [], body: await response.text() };
    }
    const frames: TimedFrame[] = [];
    for await (const block of sseBlocks(response.body as AsyncIterable<Uint8Array>)) {
      if (block.startsWith(':')) continue; // a ping comment
      const frame = { ...parseFrame(block), at: performance.now() };
      frames.push(frame);
      options.onFrame?.(frame);
    }
    return { status: response.status, frames };
  }

  /** A request with the management key whose answer must have one of the `expected` statuses: its JSON body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed JSON bodies, checked by status
  async json(method: string, path: string, body?: unknown, expected: number[] = [200]): Promise<any> {
    const response = await fetch(this.url + path, {
      method,
      headers: { authorization: `Bearer ${this.managementKey}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!expected.includes(response.status)) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text);
  }
}
