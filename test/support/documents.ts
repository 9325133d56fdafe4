import { expect } from 'chai';
import { call } from './api.js';
import { testPlatform } from './global.js';

/** Uploads a file as multipart/form-data over real HTTP and answers the parsed response. */
export async function uploadFile(key: string, kb: string, bytes: Uint8Array, filename: string, contentType = 'application/octet-stream', title?: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: contentType }), filename);
  if (title) form.append('title', title);
  const response = await fetch(`${testPlatform().apiUrl}/v1/knowledge/${encodeURIComponent(kb)}/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Polls a document until it is `ready` or `failed`; answers the final document (with its Markdown). */
export async function settledDocument(key: string, kb: string, documentId: string, timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call('GET', `/v1/knowledge/${encodeURIComponent(kb)}/documents/${documentId}?markdown=true`, { key });
    if (body.document.status === 'ready' || body.document.status === 'failed') return body.document;
    expect(Date.now(), `document ${documentId} still ${body.document.status}`).to.be.below(deadline);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
