import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The SSE clients of the sse-fanout benchmark, in a child process of their own (forked with IPC): 2,000
 * sockets parsing frames in the process that serves them would put the clients' parsing and garbage
 * into the server's latency and memory, which are what is measured.
 *
 * Commands from the parent (process.send): `open` (streams of GET /v1/runs/{id}/events, each with its
 * `after`; answered `opened` once every stream has parsed its first frame), `collect` (answers `report`:
 * the delivery latencies since the last collect, and the stream counts), `close` (hangs every stream up).
 * A frame whose data carries `sent_at` (ms since the epoch, from performance.timeOrigin + now() in the
 * writer) gives one latency: written → parsed here.
 */

export type ClientCommand = { cmd: 'open'; url: string; key: string; streams: Array<{ runId: string; after: number }> } | { cmd: 'collect' } | { cmd: 'close' };

export type ClientReply =
  | { type: 'opened'; streams: number; failed: number }
  | { type: 'report'; latencies: number[]; frames: number; dropped: number; gaps: number; duplicates: number; open: number }
  | { type: 'closed' };

interface Stream {
  request: http.ClientRequest;
  lastId: number;
  connected: boolean;
  closing: boolean;
}

const streams: Stream[] = [];
let latencies: number[] = [];
let frames = 0;
let dropped = 0;
let gaps = 0;
let duplicates = 0;

function send(reply: ClientReply): void {
  process.send!(reply);
}

function open(url: string, key: string, runId: string, after: number, onFirst: (ok: boolean) => void): void {
  const stream: Stream = { request: undefined as unknown as http.ClientRequest, lastId: after, connected: false, closing: false };
  let first = true;
  const settle = (ok: boolean) => {
    if (!first) return;
    first = false;
    stream.connected = ok;
    onFirst(ok);
  };
  const ended = () => {
    if (!stream.closing && stream.connected) dropped++;
    settle(false);
  };
  stream.request = http.get(`${url}/v1/runs/${runId}/events?after=${after}`, { agent: false, headers: { authorization: `Bearer ${key}` } }, (response) => {
    if (response.statusCode !== 200) {
      response.resume();
      return settle(false);
    }
    response.setEncoding('utf8');
    let buffer = '';
    response.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (block.startsWith(':')) continue;
        const at = performance.timeOrigin + performance.now();
        const id = Number(/^id: (\d+)$/m.exec(block)?.[1]);
        if (id <= stream.lastId) duplicates++;
        else if (id !== stream.lastId + 1) gaps++;
        stream.lastId = Math.max(stream.lastId, id);
        frames++;
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data?.includes('sent_at')) latencies.push(at - (JSON.parse(data) as { sent_at: number }).sent_at);
        settle(true);
      }
    });
    response.on('end', ended);
    response.on('error', ended);
  });
  stream.request.on('error', ended);
  streams.push(stream);
}

process.on('message', (command: ClientCommand) => {
  if (command.cmd === 'open') {
    let pending = command.streams.length;
    let failed = 0;
    for (const { runId, after } of command.streams) {
      open(command.url, command.key, runId, after, (ok) => {
        if (!ok) failed++;
        if (--pending === 0) send({ type: 'opened', streams: command.streams.length, failed });
      });
    }
  } else if (command.cmd === 'collect') {
    send({ type: 'report', latencies, frames, dropped, gaps, duplicates, open: streams.filter((s) => s.connected && !s.closing).length });
    latencies = [];
    frames = dropped = gaps = duplicates = 0;
  } else {
    for (const stream of streams) {
      stream.closing = true;
      stream.request.destroy();
    }
    streams.length = 0;
    send({ type: 'closed' });
  }
});
