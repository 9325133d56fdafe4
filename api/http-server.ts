import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface RunningHttpServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Listens with the Koa app; close() stops accepting, ends idle keep-alive sockets and waits. */
export async function listen(app: Koa, host: string, port: number): Promise<RunningHttpServer> {
  const server = http.createServer(app.callback());
  // Longer than a typical load balancer's idle timeout, so it never closes a socket the LB still uses.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actualPort = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Long-lived streams (SSE) would hold close() open forever; give them a moment, then end them.
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      }),
  };
}
