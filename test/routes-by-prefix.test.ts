import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import { listen, type RunningHttpServer } from '../api/http-server.js';
import { literalPrefix, routesByPrefix } from '../api/routes-by-prefix.js';
import { call, newTenant } from './support/api.js';
import { testPlatform } from './support/global.js';

/** api/routes-by-prefix.ts: routers asked only about the paths they have routes under. */
describe('routes by prefix', () => {
  it('files a route under its leading literal segments, at most two', () => {
    expect(literalPrefix('/v1/agents')).to.equal('/v1/agents');
    expect(literalPrefix('/v1/agents/:id/versions')).to.equal('/v1/agents');
    expect(literalPrefix('/invites/:token')).to.equal('/invites');
    expect(literalPrefix('/console')).to.equal('/console');
    expect(literalPrefix('/.well-known/oauth-authorization-server')).to.equal('/.well-known/oauth-authorization-server');
    expect(literalPrefix('/V1/Agents')).to.equal('/v1/agents');
    expect(literalPrefix('/:anything')).to.equal(undefined);
    expect(literalPrefix('/')).to.equal(undefined);
  });

  describe('over HTTP, with routers of its own', () => {
    let server: RunningHttpServer;
    /** Which routes a request passed, in order. */
    const visited: string[] = [];

    before(async () => {
      const mark = (name: string, answer: boolean) => async (ctx: Koa.Context, next: Koa.Next) => {
        visited.push(name);
        if (answer) ctx.body = { route: name, params: ctx.params };
        else await next();
      };
      const first = new Router();
      first.get('/things/:id', mark('first /things/:id (passes on)', false));
      first.get('/pages/:slug', mark('first /pages/:slug', true));
      const second = new Router();
      second.get('/things/:id', mark('second /things/:id', true));
      second.get('/things/:id/parts', mark('second /things/:id/parts', true));
      const third = new Router();
      third.get('/things/special', mark('third /things/special', true));
      third.post('/home', mark('third POST /home', true));
      const app = new Koa();
      app.use(routesByPrefix([first, second, third]));
      app.use((ctx) => {
        visited.push('after the routers');
        ctx.status = 404;
        ctx.body = { route: null };
      });
      server = await listen(app, '127.0.0.1', 0);
    });
    after(() => server.close());

    async function get(path: string, method = 'GET') {
      visited.length = 0;
      const response = await fetch(server.url + path, { method });
      return { status: response.status, body: (await response.json()) as { route: string | null; params?: Record<string, string> }, visited: [...visited] };
    }

    it('asks the routers in their order, each passing on to the next as when mounted one after another', async () => {
      expect(await get('/things/42')).to.deep.equal({
        status: 200,
        body: { route: 'second /things/:id', params: { id: '42' } },
        visited: ['first /things/:id (passes on)', 'second /things/:id'],
      });
      // A router filed under the first two segments and one under the first alone are both asked.
      expect((await get('/things/special')).visited).to.deep.equal(['first /things/:id (passes on)', 'second /things/:id']);
      expect((await get('/things/7/parts')).body.route).to.equal('second /things/:id/parts');
      expect((await get('/pages/any-slug')).body).to.deep.equal({ route: 'first /pages/:slug', params: { slug: 'any-slug' } });
    });

    it('matches paths regardless of case and of a trailing slash, as @koa/router does', async () => {
      expect((await get('/THINGS/42')).body.route).to.equal('second /things/:id');
      expect((await get('/Pages/x/')).body.route).to.equal('first /pages/:slug');
    });

    it('passes what no router has a route under, or a method no route takes, to the middleware after it', async () => {
      for (const path of ['/nothing', '/nothing/here', '/', '//things/1', '/thingsx/1']) {
        expect(await get(path), path).to.deep.equal({ status: 404, body: { route: null }, visited: ['after the routers'] });
      }
      expect((await get('/home', 'GET')).visited).to.deep.equal(['after the routers']);
      expect((await get('/home', 'POST')).body.route).to.equal('third POST /home');
    });

    it('sets the path parameters decoded, as @koa/router does, and answers HEAD with a GET route', async () => {
      expect((await get('/things/a%20b%2Fc')).body.params).to.deep.equal({ id: 'a b/c' });
      visited.length = 0;
      const head = await fetch(`${server.url}/pages/x`, { method: 'HEAD' });
      expect(head.status).to.equal(200);
      expect(visited).to.deep.equal(['first /pages/:slug']);
    });

    it('leaves a malformed percent-encoding in a parameter as sent, as @koa/router does', async () => {
      expect((await get('/things/%E0%A4%A')).body.params).to.deep.equal({ id: '%E0%A4%A' });
    });

    /** The router's routes behind a middleware that answers what they throw as `status` and `{ caught: message }`. */
    async function listenCatching(router: Router, status: number): Promise<RunningHttpServer> {
      const app = new Koa();
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (err) {
          ctx.status = status;
          ctx.body = { caught: (err as Error).message };
        }
      });
      app.use(routesByPrefix([router]));
      return listen(app, '127.0.0.1', 0);
    }

    it("turns a route's synchronous throw into a rejection the middleware before it catches, and gives a synchronous route's caller a promise", async () => {
      const router = new Router();
      router.get('/throws', () => {
        throw new Error('thrown synchronously');
      });
      router.get('/passes', (_ctx, next) => next().then(() => undefined));
      router.get('/passes', (ctx) => {
        ctx.body = { reached: 'second' };
      });
      // The same between the handlers of one route: the first can catch what the second throws.
      router.get('/steps-sync', (ctx, next) => next().catch((err: Error) => {
        ctx.body = { recovered: err.message };
      }), () => {
        throw new Error('thrown by the second handler');
      });
      const own = await listenCatching(router, 418);
      try {
        const thrown = await fetch(`${own.url}/throws`);
        expect(thrown.status).to.equal(418);
        expect(await thrown.json()).to.deep.equal({ caught: 'thrown synchronously' });
        expect(await (await fetch(`${own.url}/passes`)).json()).to.deep.equal({ reached: 'second' });
        expect(await (await fetch(`${own.url}/steps-sync`)).json()).to.deep.equal({ recovered: 'thrown by the second handler' });
      } finally {
        await own.close();
      }
    });

    it('runs every handler of a route with several, in order', async () => {
      const router = new Router();
      router.get('/steps', async (ctx, next) => {
        ctx.state.steps = ['one'];
        await next();
      }, (ctx) => {
        ctx.body = { steps: [...(ctx.state.steps as string[]), 'two'] };
      });
      const app = new Koa();
      app.use(routesByPrefix([router]));
      const own = await listen(app, '127.0.0.1', 0);
      try {
        expect(await (await fetch(`${own.url}/steps`)).json()).to.deep.equal({ steps: ['one', 'two'] });
      } finally {
        await own.close();
      }
    });

    it('refuses a second call of next(), between routes and between the handlers of one route, as koa-compose does', async () => {
      let laterRuns = 0;
      const router = new Router();
      router.get('/twice', async (_ctx, next) => {
        await next();
        await next();
      });
      router.get('/twice', () => {
        laterRuns++;
      });
      router.get('/twice-within', async (_ctx, next) => {
        await next();
        await next();
      }, () => {
        laterRuns++;
      });
      const own = await listenCatching(router, 500);
      try {
        for (const path of ['/twice', '/twice-within']) {
          const response = await fetch(`${own.url}${path}`);
          expect(response.status).to.equal(500);
          expect(await response.json()).to.deep.equal({ caught: 'next() called multiple times' });
        }
        expect(laterRuns).to.equal(2);
      } finally {
        await own.close();
      }
    });

    it('refuses a router with a route that has no literal first segment', () => {
      const router = new Router();
      router.get('/:anything', () => undefined);
      expect(() => routesByPrefix([router])).to.throw(/no literal first segment/);
    });

    it('refuses routers whose dispatch is more than plain routes: a prefix, a host, exclusive, `use` middleware, param handlers', () => {
      expect(() => routesByPrefix([new Router({ prefix: '/v1' })])).to.throw(/prefix/);
      expect(() => routesByPrefix([new Router({ host: 'example.com' })])).to.throw(/host/);
      expect(() => routesByPrefix([new Router({ exclusive: true })])).to.throw(/exclusive/);
      const withUse = new Router();
      withUse.use('/things', (_ctx, next) => next());
      expect(() => routesByPrefix([withUse])).to.throw(/`use` middleware/);
      const withParam = new Router();
      withParam.param('id', (_id, _ctx, next) => next());
      withParam.get('/things/:id', () => undefined);
      expect(() => routesByPrefix([withParam])).to.throw(/param handlers/);
    });
  });

  describe("the platform's routes", () => {
    it('reaches operations, pages and OAuth endpoints through it, paths in any case', async () => {
      const { key } = await newTenant('prefix-routes');
      expect((await call('GET', '/v1/agents', { key })).status).to.equal(200);
      // Not a path of the OpenAPI document, which `call` checks answers against: plain fetch.
      const shouted = await fetch(`${testPlatform().apiUrl}/V1/AGENTS/`, { headers: { authorization: `Bearer ${key}` } });
      expect(shouted.status).to.equal(200);
      expect(((await shouted.json()) as { agents: unknown[] }).agents).to.deep.equal([]);
      expect((await call('GET', '/v1/agents/no-such-agent', { key })).status).to.equal(404);
      expect((await call('GET', '/healthz')).status).to.equal(200);
      const unknown = await call('GET', '/v1/no-such-collection', { key });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('not_found');
      // The OAuth endpoints and the pages are not in the OpenAPI document: plain fetch.
      const metadata = await fetch(`${testPlatform().apiUrl}/.well-known/oauth-authorization-server`);
      expect(metadata.status).to.equal(200);
      expect(((await metadata.json()) as { issuer: string }).issuer).to.be.a('string');
      const consolePage = await fetch(`${testPlatform().apiUrl}/console`, { redirect: 'manual' });
      // Signed out, the console answers its sign-in page.
      expect(consolePage.status).to.equal(200);
      expect(await consolePage.text()).to.contain('/console/sign-in');
      const invite = await fetch(`${testPlatform().apiUrl}/invites/not-a-token`);
      expect(invite.headers.get('content-type')).to.match(/text\/html/);
    });
  });
});
