import { testPlatform } from './global.js';

export interface SseFrame {
  id: number;
  event: string;
  data: any;
}

export interface SseResponse {
  status: number;
  headers: Headers;
  /** Every frame received, in order (ping comments are counted in `pings`). */
  frames: SseFrame[];
  pings: number;
  /** The error body when the answer was not a stream. */
  body?: any;
}

export interface StreamOptions {
  key: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Stop reading (and hang up) once this returns true for a frame. */
  until?: (frame: SseFrame, frames: SseFrame[]) => boolean;
  /** Called for every frame as it arrives. */
  onFrame?: (frame: SseFrame) => void | Promise<void>;
  /** Hang up after this long, whatever has arrived. */
  hangUpAfterMs?: number;
}

/** Sends a request whose answer is an SSE stream and reads it over real HTTP until it ends (or `until`). */
export async function stream(method: string, path: string, options: StreamOptions): Promise<SseResponse> {
  const controller = new AbortController();
  if (options.hangUpAfterMs) setTimeout(() => controller.abort(), options.hangUpAfterMs);
  const headers: Record<string, string> = { authorization: `Bearer ${options.key}`, ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(testPlatform().apiUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: controller.signal,
  });
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return { status: response.status, headers: response.headers, frames: [], pings: 0, body: await response.json() };
  }
  const frames: SseFrame[] = [];
  let pings = 0;
  try {
    for await (const block of sseBlocks(response.body as AsyncIterable<Uint8Array>)) {
      if (block.startsWith(':')) {
        pings++;
        continue;
      }
      const frame = parseFrame(block);
      frames.push(frame);
      await options.onFrame?.(frame);
      if (options.until?.(frame, frames)) {
        controller.abort();
        return { status: response.status, headers: response.headers, frames, pings };
      }
    }
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  }
  return { status: response.status, headers: response.headers, frames, pings };
}

/** The blocks of an SSE body (the text between blank lines) as they arrive: frames, and `:` comments (pings). */
export async function* sseBlocks(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      yield block;
    }
  }
}

/** One SSE frame (the lines between blank lines) as id, event and parsed data. */
export function parseFrame(block: string): SseFrame {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const colon = line.indexOf(':');
    fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
  }
  return { id: Number(fields.id), event: fields.event ?? 'message', data: JSON.parse(fields.data ?? 'null') };
}

/** The text a client would show: deltas since the last attempt.reset, per turn. */
export function streamedText(frames: SseFrame[]): string {
  let text = '';
  let turnText = '';
  for (const frame of frames) {
    if (frame.event === 'attempt.reset') turnText = '';
    if (frame.event === 'message.delta') turnText += frame.data.delta;
    if (frame.event === 'message.completed') {
      text += turnText;
      turnText = '';
    }
  }
  return text;
}
