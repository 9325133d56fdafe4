import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedToolRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type ToolRouteHandler = (request: ReceivedToolRequest, res: http.ServerResponse) => void | Promise<void>;

export interface LocalToolServer {
  /** `http://<host>:<port>` */
  origin: string;
  port: number;
  requests: ReceivedToolRequest[];
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1 (port 0) that records every request and hands it, body read, to `handler`. */
export async function startToolServer(handler: ToolRouteHandler, host = '127.0.0.1'): Promise<LocalToolServer> {
  const requests: ReceivedToolRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(received);
      Promise.resolve(handler(received, res)).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        // Tests leave stalled responses open on purpose; do not wait for them.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  res.writeHead(status, { 'content-type': contentType });
  res.end(JSON.stringify(body));
}

export function sendText(res: http.ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType });
  res.end(body);
}
