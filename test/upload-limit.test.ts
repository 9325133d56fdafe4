import { expect } from 'chai';
import http from 'node:http';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';

/** How much a client manages to send of an endless chunked upload before the server hangs up. */
async function sendEndlessChunkedUpload(key: string, kb: string, giveUpAfterBytes: number): Promise<{ sent: number; closedEarly: boolean }> {
  const url = new URL(`${testPlatform().apiUrl}/v1/knowledge/${kb}/documents`);
  const boundary = 'endless-upload-boundary';
  const chunk = Buffer.alloc(64 * 1024, 'a');
  return new Promise((resolve) => {
    let sent = 0;
    let done = false;
    const finish = (closedEarly: boolean) => {
      if (done) return;
      done = true;
      request.destroy();
      resolve({ sent, closedEarly });
    };
    const request = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
    });
    request.on('error', () => finish(true));
    request.on('close', () => finish(sent < giveUpAfterBytes));
    request.on('response', (response) => response.resume());
    request.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`);
    const pump = () => {
      while (!done) {
        if (sent >= giveUpAfterBytes) return finish(false);
        sent += chunk.length;
        if (!request.write(chunk)) return request.once('drain', pump);
      }
    };
    pump();
  });
}

describe('upload limit', () => {
  it('stops reading a chunked upload over 4 MB: the connection closes instead of draining the rest', async () => {
    const { key } = await newTenant('upload-limit');
    expect((await call('POST', '/v1/knowledge', { key, body: { name: 'endless' } })).status).to.equal(201);
    const { sent, closedEarly } = await sendEndlessChunkedUpload(key, 'endless', 64 * 1024 * 1024);
    expect(closedEarly, `the server read ${sent} bytes of an endless upload`).to.equal(true);
    expect(sent).to.be.below(16 * 1024 * 1024);
    expect((await call('GET', '/v1/knowledge/endless/documents', { key })).body.documents).to.deep.equal([]);
  });
});
