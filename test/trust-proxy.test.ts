import { expect } from 'chai';
import Koa from 'koa';
import { listen, type RunningHttpServer } from '../api/http-server.js';
import { takeAttempt, type AttemptLimit } from '../api/oauth/rate-limit.js';
import { proxyHopsFromEnv, trustProxies } from '../api/trust-proxy.js';
import { testPlatform } from './support/global.js';

describe('TRUST_PROXY', () => {
  it('reads false, true and a number of hops, and refuses anything else at start', () => {
    expect([undefined, '', 'false', '0', 'true', '1', '2', ' 3 '].map(proxyHopsFromEnv)).to.deep.equal([0, 0, 0, 0, 1, 1, 2, 3]);
    for (const bad of ['yes', '-1', '1.5', '100', 'true,false']) expect(() => proxyHopsFromEnv(bad), bad).to.throw(/TRUST_PROXY/);
  });

  describe('a per-address limit behind proxies', () => {
    let server: RunningHttpServer;
    let hops = 0;
    const limit: AttemptLimit = { bucket: `test:trust-proxy:${Date.now()}`, limit: 3, windowSeconds: 3600 };

    before(async () => {
      const app = new Koa();
      app.use(async (ctx) => {
        trustProxies(app, hops);
        const wait = await takeAttempt(testPlatform().db, { ...limit, bucket: `${limit.bucket}:${hops}` }, ctx.ip);
        ctx.status = wait > 0 ? 429 : 200;
        ctx.body = ctx.ip;
      });
      server = await listen(app, '127.0.0.1', 0);
    });
    after(() => server.close());

    /** A request as it reaches the API after `hops` proxies: each appended the address it got it from. */
    const throughProxies = (forged: string, client: string, proxies: string[]) =>
      fetch(server.url, { headers: { 'x-forwarded-for': [forged, client, ...proxies].join(', ') } });

    for (const [setting, proxies] of [
      ['true', []],
      ['2', ['10.0.0.2']],
    ] as const) {
      it(`TRUST_PROXY=${setting}: a forged leftmost X-Forwarded-For neither names the client nor escapes its limit`, async () => {
        hops = proxyHopsFromEnv(setting);
        const answers = [];
        for (let i = 0; i < 5; i++) {
          const response = await throughProxies(`198.51.100.${i}`, '203.0.113.9', [...proxies]);
          answers.push([response.status, await response.text()]);
        }
        expect(answers.map(([, ip]) => ip)).to.deep.equal(Array(5).fill('203.0.113.9'));
        expect(answers.map(([status]) => status)).to.deep.equal([200, 200, 200, 429, 429]);
      });
    }

    it('without TRUST_PROXY the header is ignored: the address is the socket\'s', async () => {
      hops = 0;
      const response = await throughProxies('198.51.100.1', '203.0.113.9', []);
      expect(await response.text()).to.equal('127.0.0.1');
    });
  });
});
