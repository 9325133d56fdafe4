import { expect } from 'chai';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';
import { mcpUrl } from './support/mcp-client.js';

/** RFC 9110 §15.5.6: a method a known path does not have is a 405 with `Allow`; an unknown path stays a 404. */
describe('405 Method Not Allowed', () => {
  let key: string;
  before(async () => {
    ({ key } = await newTenant('methods'));
  });

  const cases: Array<[string, string, string[]]> = [
    ['PUT', '/v1/agents', ['GET', 'HEAD', 'POST']],
    ['PATCH', '/v1/runs', ['GET', 'HEAD']],
    ['DELETE', '/v1/prompts/x/versions/1', ['GET', 'HEAD']],
    ['POST', '/healthz', ['GET', 'HEAD']],
    ['DELETE', '/readyz', ['GET', 'HEAD']],
    ['GET', '/oauth/token', ['POST']],
    ['GET', '/oauth/register', ['POST']],
    ['PUT', '/oauth/authorize', ['GET', 'HEAD', 'POST']],
    ['POST', '/.well-known/oauth-authorization-server', ['GET', 'HEAD']],
    ['POST', '/.well-known/oauth-protected-resource/mcp', ['GET', 'HEAD']],
    ['POST', '/openapi.json', ['GET', 'HEAD']],
  ];
  for (const [method, path, allowed] of cases) {
    it(`answers ${method} ${path} with 405, Allow: ${allowed.join(', ')}, in the API's error body`, async () => {
      const response = await call(method, path, { key });
      expect(response.status).to.equal(405);
      const allow = (response.headers.get('allow') ?? '').split(/,\s*/);
      expect(allow).to.include.members(allowed);
      expect(allow).to.not.include(method);
      expect(response.body.error.code).to.equal('method_not_allowed');
      expect(response.body.error.message).to.contain(method);
    });
  }

  it('answers 405 before authentication: the method is wrong whoever asks', async () => {
    const response = await call('PUT', '/v1/agents');
    expect(response.status).to.equal(405);
  });

  it('keeps 404 for unknown paths', async () => {
    for (const [method, path] of [['GET', '/v1/nothing-here'], ['PUT', '/v2/agents'], ['GET', '/oauth/nope']]) {
      const response = await call(method!, path!, { key });
      expect(response.status, `${method} ${path}`).to.equal(404);
      expect(response.body.error.code).to.equal('not_found');
    }
  });

  it('answers HEAD where GET exists, and OPTIONS with Allow', async () => {
    const head = await fetch(`${testPlatform().apiUrl}/healthz`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    const options = await fetch(`${testPlatform().apiUrl}/v1/agents`, { method: 'OPTIONS' });
    expect(options.status).to.equal(204);
    expect(options.headers.get('allow')!.split(/,\s*/)).to.include.members(['GET', 'HEAD', 'POST', 'OPTIONS']);
    const preflight = await fetch(`${testPlatform().apiUrl}/oauth/token`, { method: 'OPTIONS' });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get('access-control-allow-origin')).to.equal('*');
  });

  it('answers 405 with Allow on /mcp to a method other than POST', async () => {
    for (const method of ['PUT', 'PATCH', 'GET']) {
      const response = await fetch(mcpUrl(), { method, headers: { authorization: `Bearer ${key}` } });
      expect(response.status, method).to.equal(405);
      expect(response.headers.get('allow')).to.contain('POST');
    }
  });
});
