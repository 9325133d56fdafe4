import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A client's redirect target on 127.0.0.1: it records every callback it receives. */
export interface RedirectServer {
  /** `http://127.0.0.1:<port>/callback` */
  redirectUri: string;
  callbacks: URL[];
  close(): Promise<void>;
}

export async function startRedirectServer(): Promise<RedirectServer> {
  const callbacks: URL[] = [];
  const server = http.createServer((req, res) => {
    callbacks.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    callbacks,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
