import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a fake provider received: enough to assert the request was in the provider's own format. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/** An answer: SSE events sent one by one (`pauseMs` before each), or a plain JSON error. */
export type WireReply =
  | { kind: 'sse'; events: SseEvent[]; pauseMs?: number }
  | { kind: 'error'; status: number; body: unknown };

export interface SseEvent {
  /** The `event:` line; OpenAI sends none, Anthropic names every event. */
  event?: string;
  /** JSON-encoded into the `data:` line, except a string, which is sent as is (`[DONE]`). */
  data: unknown;
}

export interface WireServer {
  /** Ends in `/v1`, as the SDKs' base URLs do. */
  baseURL: string;
  requests: ReceivedRequest[];
  /** Replies whose client hung up before the last event was written. */
  abandonedReplies: number;
  close(): Promise<void>;
}

/**
 * A local HTTP server on `host` (127.0.0.1 unless given) that answers each request with `reply(request)`,
 * streaming the events over real SSE the way the provider does, so the SDK's own parsers read them.
 */
export async function startWireServer(reply: (request: ReceivedRequest) => WireReply, host = '127.0.0.1'): Promise<WireServer> {
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const request: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : undefined };
    wire.requests.push(request);

    const answer = reply(request);
    if (answer.kind === 'error') {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let hungUp = false;
    res.on('close', () => (hungUp = !res.writableFinished));
    for (const event of answer.events) {
      if (answer.pauseMs) await new Promise((resolve) => setTimeout(resolve, answer.pauseMs));
      if (hungUp) break;
      const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
      res.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`);
    }
    if (hungUp) wire.abandonedReplies++;
    else res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;

  const wire: WireServer = {
    baseURL: `http://${host}:${port}/v1`,
    requests: [],
    abandonedReplies: 0,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return wire;
}
