import http from 'node:http';

/**
 * Registrations are rate-limited per client address, and a Postgres test database outlives the run.
 * So the tests register from a loopback address of this run's own (127.0.0.0/8 is all loopback on
 * Linux): runs never eat into each other's budget, nor into that of the tests calling from 127.0.0.1.
 */
export const REGISTRATION_ADDRESS = randomLoopbackAddress();

export function randomLoopbackAddress(): string {
  const octet = () => 1 + Math.floor(Math.random() * 254);
  return `127.${octet()}.${octet()}.${octet()}`;
}

interface FetchInit {
  method?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  body?: unknown;
}

/** A fetch that connects from `localAddress` (the built-in fetch cannot choose); enough for JSON and form posts. */
export function fetchFrom(localAddress: string) {
  return async (url: string | URL, init: FetchInit = {}): Promise<Response> => {
    try {
      return await request(url, init, localAddress);
    } catch (err) {
      // Only Linux puts all of 127.0.0.0/8 on the loopback interface; elsewhere share 127.0.0.1's budget.
      if ((err as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL') return request(url, init, undefined);
      throw err;
    }
  };
}

function request(url: string | URL, init: FetchInit, localAddress: string | undefined): Promise<Response> {
  const headers = Object.fromEntries(new Headers(init.headers).entries());
  const body = init.body === undefined || init.body === null ? undefined : Buffer.from(String(init.body));
  if (body) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(new URL(url), { method: init.method ?? 'GET', headers, localAddress }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          for (const item of [value ?? []].flat()) responseHeaders.append(name, item);
        }
        resolve(new Response(chunks.length ? Buffer.concat(chunks) : null, { status: response.statusCode!, headers: responseHeaders }));
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
