import fs from 'node:fs';
import net from 'node:net';

/** Ports this process has handed out, never handed out twice. */
const handedOut = new Set<number>();

/**
 * A TCP port that was free a moment ago on 127.0.0.1, for a server started next (a Temporal dev server,
 * a wire server).
 *
 * Why not the port the kernel gives a listener on port 0: that comes from the range it also takes the
 * local ports of outgoing connections from, so once released it may go to one of the many connections
 * this process opens before the server meant to listen on it does (a dev server failed to start in CI's
 * PGlite pass; this is the suspected cause). So it is picked at random below that range, and checked free.
 */
export async function freePort(): Promise<number> {
  const ceiling = ephemeralRangeStart();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * (ceiling - 10_000));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port found between 10000 and ${ceiling}`);
}

/** The start of the kernel's range for outgoing connections' local ports (Linux; 32768 elsewhere). */
function ephemeralRangeStart(): number {
  try {
    const start = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 11_000 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
