import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { authorizeUrl, FormBrowser, formsOf, pkcePair, postToken, registerClient, registerPublicClient } from './support/oauth-browserless.js';
import { newOAuthUser } from './support/oauth-users.js';

/**
 * Issue 11, "No input gives a 500", for the requests that are not JSON: multipart uploads and the
 * OAuth server's forms, query strings and registration document. Postgres stores no U+0000, so each
 * of these must be refused (or ignored) before it reaches a query.
 */
describe('hardening: NUL characters in forms and uploads', () => {
  const NUL = '\u0000';

  describe('multipart uploads', () => {
    let key: string;
    before(async () => {
      ({ key } = await newTenant('nul-upload'));
      expect((await call('POST', '/v1/knowledge', { key, body: { name: 'docs' } })).status).to.equal(201);
    });

    async function upload(form: FormData) {
      const response = await fetch(`${testPlatform().apiUrl}/v1/knowledge/docs/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      });
      return { status: response.status, body: (await response.json()) as any };
    }

    it('refuses a title with a NUL character, naming the field', async () => {
      const form = new FormData();
      form.append('title', `bad${NUL}title`);
      form.append('file', new Blob(['hello']), 'hello.txt');
      const response = await upload(form);
      expect(response.status, JSON.stringify(response.body)).to.equal(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).to.include('body.title');
    });

    it('refuses a file name with a NUL character, naming the field', async () => {
      // Written by hand: FormData escapes the name's control characters. A raw NUL in a part header is
      // malformed multipart; an RFC 5987 `filename*` decodes to one.
      const boundary = 'nul-boundary';
      const body = [`--${boundary}`, `Content-Disposition: form-data; name="file"; filename*=UTF-8''hello%00.txt`, 'Content-Type: text/plain', '', 'hello', `--${boundary}--`, ''].join('\r\n');
      const raw = await fetch(`${testPlatform().apiUrl}/v1/knowledge/docs/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      const response = { status: raw.status, body: (await raw.json()) as any };
      expect(response.status, JSON.stringify(response.body)).to.equal(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field), JSON.stringify(response.body)).to.include('body.file');
    });

    it('takes a file with NUL bytes as binary: a failed document with the reason, nothing stored', async () => {
      const form = new FormData();
      form.append('file', new Blob([`zebra${NUL}crossing`]), 'nul.txt');
      const response = await upload(form);
      expect(response.status, JSON.stringify(response.body)).to.equal(202);
      expect(response.body.document.status).to.equal('failed');
      expect(response.body.document.error).to.be.a('string').and.not.be.empty;
    });
  });

  describe('the OAuth server', () => {
    it('answers invalid_request to a token request with a NUL in any field', async () => {
      const client = await registerPublicClient();
      for (const field of ['client_id', 'code', 'code_verifier', 'redirect_uri', 'grant_type']) {
        const fields: Record<string, string> = {
          grant_type: 'authorization_code',
          client_id: client.clientId,
          code: 'abc',
          code_verifier: pkcePair().verifier,
          redirect_uri: client.redirectUri,
        };
        fields[field] = `${fields[field]}${NUL}`;
        const response = await postToken(fields);
        expect(response.status, `${field}: ${JSON.stringify(response.body)}`).to.equal(400);
        expect(response.body.error, field).to.equal('invalid_request');
      }
      const refresh = await postToken({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: `rt${NUL}` });
      expect(refresh.status).to.equal(400);
      expect(refresh.body.error).to.equal('invalid_request');
    });

    it('answers invalid_request to a revocation with a NUL in the token', async () => {
      const client = await registerPublicClient();
      const response = await postToken({ token: `tok${NUL}`, client_id: client.clientId }, { path: '/oauth/revoke' });
      expect(response.status, JSON.stringify(response.body)).to.equal(400);
      expect(response.body.error).to.equal('invalid_request');
    });

    it('refuses a client registration with a NUL in its metadata', async () => {
      for (const metadata of [
        { client_name: `evil${NUL}`, redirect_uris: ['http://127.0.0.1:9/cb'] },
        { redirect_uris: [`http://127.0.0.1:9/cb${NUL}`] },
        { redirect_uris: ['http://127.0.0.1:9/cb'], [`x${NUL}`]: 1 },
      ]) {
        const response = await registerClient(metadata);
        expect(response.status, JSON.stringify(response.body)).to.equal(400);
        expect(response.body.error).to.be.oneOf(['invalid_client_metadata', 'invalid_redirect_uri', 'invalid_request']);
      }
    });

    it('shows an error page for an authorization request with a NUL in any parameter', async () => {
      const client = await registerPublicClient();
      const { challenge } = pkcePair();
      const base = { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: 's' };
      for (const field of Object.keys(base) as Array<keyof typeof base>) {
        const response = await new FormBrowser().get(authorizeUrl({ ...base, [field]: `${base[field]}${NUL}` }));
        expect(response.status, `${field}: ${response.body}`).to.equal(400);
        expect(response.headers.get('location'), field).to.equal(null);
      }
    });

    it('refuses a sign-in with a NUL in the e-mail or password without a 5xx', async () => {
      const { tenantId } = await newTenant('nul-signin');
      const user = await newOAuthUser([tenantId]);
      const client = await registerPublicClient();
      const url = authorizeUrl({ response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUri, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's' });
      for (const [email, password] of [[`${user.email}${NUL}`, user.password], [user.email, `${user.password}${NUL}`]]) {
        const browser = new FormBrowser();
        const page = await browser.get(url);
        const form = formsOf(page.body)[0]!;
        const response = await browser.post('/oauth/authorize', [...form, ['email', email!], ['password', password!]]);
        expect(response.status, response.body).to.equal(400);
        expect(response.body).to.include('could not be read');
      }
    });
  });
});
