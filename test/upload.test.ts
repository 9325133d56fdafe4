import { expect } from 'chai';
import Koa from 'koa';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { readUpload, type UploadedFile } from '../api/upload.js';

/**
 * api/upload.ts `readUpload` on a real HTTP server: what it answers for a whole upload, and that it
 * settles when the client goes away mid-body (piping the request never ends the parser then, and a
 * handler awaiting it would hang with its memory for as long as the process lives).
 */
describe('reading a multipart upload', () => {
  const boundary = 'UpLoAd';
  let server: http.Server;
  let port: number;
  let outcomes: Array<Promise<UploadedFile>>;

  before(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx) => {
      const outcome = readUpload(ctx);
      outcomes.push(outcome);
      await outcome.then(
        (file) => (ctx.body = { filename: file.filename, size: file.bytes.length }),
        () => (ctx.status = 400),
      );
    });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  beforeEach(() => {
    outcomes = [];
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const head = (length: number) =>
    `POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`;
  const filePart = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n`;

  it('reads the whole file of a complete body', async () => {
    const body = `${filePart}hello\r\n--${boundary}--\r\n`;
    const response = await fetch(`http://127.0.0.1:${port}/upload`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(response.status).to.equal(200);
    expect(await response.json()).to.deep.equal({ filename: 'notes.txt', size: 5 });
  });

  it('settles, refusing the upload, when the client goes away before the body ends', async () => {
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    // Promises a megabyte, sends the file part's start, then hangs up.
    socket.write(head(1024 * 1024) + filePart + 'x'.repeat(10_000));
    while (outcomes.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    socket.destroy();
    const settled = await Promise.race([
      outcomes[0]!.then(
        () => 'resolved',
        (err: Error) => err.message,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still pending after 5 s'), 5_000)),
    ]);
    expect(settled).to.match(/cut off/);
  });
});
