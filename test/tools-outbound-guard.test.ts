import { expect } from 'chai';
import zlib from 'node:zlib';
import { OutboundTimeoutError, ResponseTooLargeError, ToolUpstreamError } from '../activities/tools/errors.js';
import { guardedWebFetch } from '../activities/tools/guarded-web-fetch.js';
import {
  guardedFetch,
  MAX_REDIRECTS,
  OutboundRefusedError,
  outboundPolicyFromEnv,
  type GuardedFetchInit,
  type HostResolver,
} from '../activities/tools/outbound-guard.js';
import { assertAddressAllowed } from '../activities/tools/outbound-policy.js';
import { classifyAddress } from '../activities/tools/special-addresses.js';
import type { OutboundPolicy } from '../activities/tools/types.js';
import { sendJson, sendText, startToolServer, type LocalToolServer } from './support/tool-http-server.js';
import { failure } from './support/failure.js';

const noAllowList: OutboundPolicy = { allow: [] };
const loopbackAllowed: OutboundPolicy = { allow: ['127.0.0.1'] };

/** Resolves every name to fixed addresses, as a hostile or internal DNS would. */
function resolvingTo(...addresses: string[]): HostResolver {
  return async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
}

async function refusal(url: string, init: Partial<GuardedFetchInit> = {}): Promise<OutboundRefusedError> {
  try {
    await guardedFetch(url, { policy: noAllowList, timeoutMs: 2000, ...init });
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(OutboundRefusedError);
    return err as OutboundRefusedError;
  }
  throw new Error(`expected ${url} to be refused`);
}

describe('tools: outbound guard', () => {
  describe('address classification', () => {
    const cases: Array<[string, string | undefined]> = [
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['::1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['fc00::1', 'private'],
      ['fd12:3456::1', 'private'],
      ['169.254.1.1', 'link-local'],
      ['fe80::1', 'link-local'],
      ['169.254.169.254', 'cloud metadata'],
      ['fd00:ec2::254', 'cloud metadata'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['0.1.2.3', 'reserved'],
      ['100.64.0.1', 'carrier-grade NAT'],
      ['100.127.255.255', 'carrier-grade NAT'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.2.1', 'reserved'],
      ['198.18.0.1', 'reserved'],
      ['2001:db8::1', 'reserved'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:169.254.169.254', 'cloud metadata'],
      ['168.63.129.16', 'cloud metadata'],
      ['::ffff:100.64.0.1', 'carrier-grade NAT'],
      ['64:ff9b::a00:1', 'private'],
      ['2002:7f00:1::1', 'loopback'],
      ['8.8.8.8', undefined],
      ['1.1.1.1', undefined],
      ['172.32.0.1', undefined],
      ['100.128.0.1', undefined],
      ['::ffff:8.8.8.8', undefined],
      ['2606:4700:4700::1111', undefined],
    ];
    for (const [address, kind] of cases) {
      it(`${address} is ${kind ?? 'public'}`, () => {
        expect(classifyAddress(address)?.kind).to.equal(kind);
      });
    }
  });

  describe('refused destinations', () => {
    const refused: Array<[string, RegExp]> = [
      ['http://127.0.0.1:9/', /refused: 127\.0\.0\.1 is a loopback address; allow it with TOOL_HTTP_ALLOW_HOSTS$/],
      ['http://[::1]:9/', /::1 is a loopback address/],
      ['http://10.0.0.1/', /10\.0\.0\.1 is a private address/],
      ['http://172.16.5.4/', /is a private address/],
      ['http://192.168.0.1/', /is a private address/],
      ['http://[fc00::1]/', /fc00::1 is a private address/],
      ['http://169.254.1.1/', /is a link-local address/],
      ['http://[fe80::1]/', /fe80::1 is a link-local address/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a cloud metadata address.*\(by this exact address\)/],
      ['http://[fd00:ec2::254]/', /is a cloud metadata address/],
      ['http://0.0.0.0:9/', /0\.0\.0\.0 is an unspecified address/],
      ['http://[::]:9/', /:: is an unspecified address/],
      ['http://100.64.0.1/', /is a carrier-grade NAT address/],
      ['http://224.0.0.1/', /is a multicast address/],
      ['http://255.255.255.255/', /is a broadcast address/],
      ['http://240.0.0.1/', /is a reserved address/],
      ['http://[::ffff:127.0.0.1]:9/', /::ffff:7f00:1 is a loopback address \(it carries IPv4 127\.0\.0\.1\)/],
      ['http://[::ffff:10.0.0.1]/', /is a private address \(it carries IPv4 10\.0\.0\.1\)/],
      ['http://[::ffff:169.254.169.254]/', /is a cloud metadata address/],
      // The URL parser turns these spellings into 127.0.0.1; the guard sees that.
      ['http://2130706433:9/', /127\.0\.0\.1 is a loopback address/],
      ['http://0x7f.1:9/', /127\.0\.0\.1 is a loopback address/],
    ];
    for (const [url, message] of refused) {
      it(`refuses ${url}`, async () => {
        expect((await refusal(url)).message).to.match(message);
      });
    }

    it('refuses a host name that resolves to loopback (localhost), without saying what it resolved to', async () => {
      const err = await refusal('http://localhost:9/');
      expect(err.message).to.equal('refused: the address of localhost is not allowed; an operator can allow it with TOOL_HTTP_ALLOW_HOSTS');
      expect(err.host).to.equal('localhost');
    });

    it('refuses a host name resolving to a private address, or to any private address among public ones', async () => {
      expect((await refusal('http://internal.example.test/', { resolveHost: resolvingTo('10.0.0.5') })).message).to.equal(
        'refused: the address of internal.example.test is not allowed; an operator can allow it with TOOL_HTTP_ALLOW_HOSTS',
      );
      // The tenant is not told the internal address (it stays in the server log), nor what kind it is.
      const internal = await refusal('http://db.corp.internal/', { resolveHost: resolvingTo('10.1.2.3') });
      expect(internal.message).not.to.match(/10\.1\.2\.3|private|resolves/);
      const mixed = await refusal('http://mixed.example.test/', { resolveHost: resolvingTo('93.184.216.34', '192.168.1.10') });
      expect(mixed.address).to.equal('192.168.1.10');
    });

    it('refuses metadata host names before asking DNS', async () => {
      let asked = false;
      const err = await refusal('http://metadata.google.internal./computeMetadata/v1/', {
        resolveHost: async () => {
          asked = true;
          return [];
        },
      });
      expect(err.message).to.match(/metadata\.google\.internal is a cloud metadata host name/);
      expect(asked).to.equal(false);
    });

    it('refuses schemes other than http and https', async () => {
      expect((await refusal('file:///etc/passwd')).message).to.match(/file: URLs are not allowed/);
      expect((await refusal('ftp://example.test/')).message).to.match(/ftp: URLs are not allowed/);
    });
  });

  describe('with a local server', () => {
    let server: LocalToolServer;
    let other: LocalToolServer;
    before(async () => {
      server = await startToolServer(async (req, res) => {
        const url = new URL(req.url, 'http://x');
        const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
        if (hop) {
          const left = Number(hop[1]);
          res.writeHead(302, { location: left > 0 ? `/hop/${left - 1}` : '/echo' }).end();
        } else if (url.pathname === '/echo') {
          sendJson(res, 200, { method: req.method, body: req.body, headers: req.headers });
        } else if (url.pathname === '/redirect') {
          res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to')! }).end();
        } else if (url.pathname === '/big') {
          const bytes = Number(url.searchParams.get('bytes'));
          // Chunked: no Content-Length to refuse early, so the cap must count the stream.
          res.writeHead(200, { 'content-type': 'text/plain' });
          for (let sent = 0; sent < bytes; sent += 64 * 1024) res.write('x'.repeat(Math.min(64 * 1024, bytes - sent)));
          res.end();
        } else if (url.pathname === '/declared-big') {
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(5 * 1024 * 1024) });
          res.write('x');
        } else if (url.pathname === '/gzip') {
          res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
          res.end(zlib.gzipSync('x'.repeat(Number(url.searchParams.get('bytes')))));
        } else if (url.pathname === '/latin1') {
          res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
          res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
        } else if (url.pathname === '/stall-headers') {
          // never answers
        } else if (url.pathname === '/stall-body') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
        } else {
          sendText(res, 200, 'hello');
        }
      });
      other = await startToolServer((req, res) => sendJson(res, 200, { headers: req.headers, method: req.method, body: req.body }));
    });
    after(async () => {
      await server.close();
      await other.close();
    });

    it('is refused without an allow-list, and reached when its address, range or name is allowed', async () => {
      expect((await refusal(`${server.origin}/`)).message).to.match(/127\.0\.0\.1 is a loopback address/);
      for (const allow of [['127.0.0.1'], ['127.0.0.0/8'], ['::ffff:127.0.0.1']]) {
        const response = await guardedFetch(`${server.origin}/`, { policy: { allow } });
        expect(response.status, allow[0]).to.equal(200);
        expect(response.body).to.equal('hello');
      }
      const viaName = await guardedFetch(`http://localhost:${server.port}/`, { policy: { allow: ['localhost'] } });
      expect(viaName.body).to.equal('hello');
    });

    it('reaches an allowed host name, and every subdomain of an allowed *.suffix, wherever they resolve', async () => {
      const resolveHost = resolvingTo('127.0.0.1');
      const exact = await guardedFetch(`http://tools.corp.test:${server.port}/`, { policy: { allow: ['tools.corp.test'] }, resolveHost });
      expect(exact.body).to.equal('hello');
      const wildcard = await guardedFetch(`http://a.b.corp.test:${server.port}/`, { policy: { allow: ['*.corp.test'] }, resolveHost });
      expect(wildcard.body).to.equal('hello');
      await refusal(`http://corp.test:${server.port}/`, { policy: { allow: ['*.corp.test'] }, resolveHost });
      await refusal(`http://other.test:${server.port}/`, { policy: { allow: ['tools.corp.test'] }, resolveHost });
    });

    it('refuses a redirect from an allowed server to a refused address', async () => {
      for (const to of ['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:192.168.0.1]/']) {
        const err = await refusal(`${server.origin}/redirect?to=${encodeURIComponent(to)}`, { policy: loopbackAllowed });
        expect(err.message).to.match(/^refused: /);
      }
    });

    it('refuses a redirect to a host name resolving to a refused address, and to another scheme', async () => {
      const err = await refusal(`${server.origin}/redirect?to=${encodeURIComponent('http://evil.test/')}`, {
        policy: loopbackAllowed,
        resolveHost: resolvingTo('192.168.7.7'),
      });
      expect(err.message).to.equal('refused: the address of evil.test is not allowed; an operator can allow it with TOOL_HTTP_ALLOW_HOSTS');
      const file = await refusal(`${server.origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`, { policy: loopbackAllowed });
      expect(file.message).to.match(/redirected to a file: URL/);
    });

    it(`follows at most ${MAX_REDIRECTS} redirects`, async () => {
      const five = await guardedFetch(`${server.origin}/hop/${MAX_REDIRECTS - 1}`, { policy: loopbackAllowed });
      expect(five.status).to.equal(200);
      expect(five.url).to.equal(`${server.origin}/echo`);
      const err = await failure(guardedFetch(`${server.origin}/hop/${MAX_REDIRECTS}`, { policy: loopbackAllowed }));
      expect(err).to.be.instanceOf(ToolUpstreamError);
      expect(err.message).to.match(/more than 5 redirects/);
    });

    it('turns a POST into a GET on 303 and keeps it on 307, as fetch does', async () => {
      const init = { policy: loopbackAllowed, method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } };
      const seeOther = JSON.parse((await guardedFetch(`${server.origin}/redirect?status=303&to=/echo`, init)).body);
      expect(seeOther).to.include({ method: 'GET', body: '' });
      expect(seeOther.headers).not.to.have.property('content-type');
      const temporary = JSON.parse((await guardedFetch(`${server.origin}/redirect?status=307&to=/echo`, init)).body);
      expect(temporary).to.include({ method: 'POST', body: '{"a":1}' });
    });

    it('drops credentials on a redirect to another origin, keeps them on the same origin', async () => {
      const headers = { authorization: 'Bearer secret', 'x-api-key': 'k', accept: 'application/json' };
      const same = JSON.parse((await guardedFetch(`${server.origin}/redirect?to=/echo`, { policy: loopbackAllowed, headers })).body);
      expect(same.headers).to.include({ authorization: 'Bearer secret', 'x-api-key': 'k' });
      const elsewhere = await guardedFetch(`${server.origin}/redirect?to=${encodeURIComponent(`${other.origin}/`)}`, { policy: loopbackAllowed, headers });
      const seen = JSON.parse(elsewhere.body).headers;
      expect(seen).not.to.have.property('authorization');
      expect(seen).not.to.have.property('x-api-key');
      expect(seen).to.include({ accept: 'application/json' });
    });

    it("names the checked URL's host in Host, whatever Host the caller sets; drops framing headers", async () => {
      const headers = { Host: 'admin.internal.test', 'content-length': '1', 'transfer-encoding': 'chunked', 'x-kept': 'yes' };
      const seen = JSON.parse((await guardedFetch(`${server.origin}/echo`, { policy: loopbackAllowed, headers })).body).headers;
      expect(seen).to.include({ host: new URL(server.origin).host, 'x-kept': 'yes' });
      expect(seen).not.to.have.property('transfer-encoding');
    });

    it('caps the response size, streamed or declared, with a clear error', async () => {
      const ok = await guardedFetch(`${server.origin}/big?bytes=${1024 * 1024}`, { policy: loopbackAllowed });
      expect(ok.body.length).to.equal(1024 * 1024);
      const streamed = await failure(guardedFetch(`${server.origin}/big?bytes=${2 * 1024 * 1024}`, { policy: loopbackAllowed }));
      expect(streamed).to.be.instanceOf(ResponseTooLargeError);
      expect(streamed.message).to.equal(`the response from 127.0.0.1:${server.port} is larger than the 1048576-byte limit for tool responses`);
      const declared = await failure(guardedFetch(`${server.origin}/declared-big`, { policy: loopbackAllowed }));
      expect(declared).to.be.instanceOf(ResponseTooLargeError);
      const small = await failure(guardedFetch(`${server.origin}/big?bytes=200`, { policy: loopbackAllowed, maxResponseBytes: 100 }));
      expect(small).to.be.instanceOf(ResponseTooLargeError);
    });

    it('decodes gzip and counts the cap after decoding; decodes the declared charset', async () => {
      const decoded = await guardedFetch(`${server.origin}/gzip?bytes=5000`, { policy: loopbackAllowed });
      expect(decoded.body).to.equal('x'.repeat(5000));
      expect(decoded.headers.get('content-encoding')).to.equal(null);
      const bomb = await failure(guardedFetch(`${server.origin}/gzip?bytes=${4 * 1024 * 1024}`, { policy: loopbackAllowed }));
      expect(bomb).to.be.instanceOf(ResponseTooLargeError);
      expect((await guardedFetch(`${server.origin}/latin1`, { policy: loopbackAllowed })).body).to.equal('café');
    });

    it('times out a server that never answers, or stops halfway through the body', async () => {
      for (const path of ['/stall-headers', '/stall-body']) {
        const started = Date.now();
        const err = await failure(guardedFetch(`${server.origin}${path}?token=secret`, { policy: loopbackAllowed, timeoutMs: 200 }));
        expect(err, path).to.be.instanceOf(OutboundTimeoutError);
        expect(err.message).to.equal(`GET ${server.origin}${path} timed out after 200 ms`);
        expect(Date.now() - started).to.be.below(2000);
      }
    });

    it("ends with the caller's abort reason, not a timeout, when the caller aborts", async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('run cancelled')), 50);
      const err = await failure(guardedFetch(`${server.origin}/stall-headers`, { policy: loopbackAllowed, signal: controller.signal }));
      expect(err.message).to.equal('run cancelled');
    });

    it('reports a refused connection as a retryable upstream error', async () => {
      const closed = await startToolServer(() => {});
      await closed.close();
      const err = await failure(guardedFetch(`${closed.origin}/`, { policy: loopbackAllowed }));
      expect(err).to.be.instanceOf(ToolUpstreamError);
      expect(err.message).to.match(/^GET http:\/\/127\.0\.0\.1:\d+\/ failed: connect ECONNREFUSED/);
      expect((err as ToolUpstreamError).retryable).to.equal(true);
    });

    it('serves the same checks as a web fetch, for the MCP transport', async () => {
      const fetch = guardedWebFetch({ policy: loopbackAllowed });
      const response = await fetch(`${server.origin}/echo`, { method: 'POST', body: 'hi', headers: { 'x-one': '1' } });
      expect(response.status).to.equal(200);
      expect(await response.json()).to.deep.include({ method: 'POST', body: 'hi' });
      const manual = await fetch(`${server.origin}/redirect?to=/echo`, { redirect: 'manual' });
      expect(manual.status).to.equal(302);
      expect(manual.headers.get('location')).to.equal('/echo');
      const err = await failure(guardedWebFetch({ policy: noAllowList })(`${server.origin}/echo`));
      expect(err).to.be.instanceOf(OutboundRefusedError);
    });
  });

  describe('policy', () => {
    it('reads TOOL_HTTP_ALLOW_HOSTS, comma-separated, and rejects entries that are not hosts, IPs or CIDRs', () => {
      expect(outboundPolicyFromEnv({ TOOL_HTTP_ALLOW_HOSTS: ' localhost, 10.0.0.0/8 ,,fd00::/8, *.corp.test,192.168.1.5 ' })).to.deep.equal({
        allow: ['localhost', '10.0.0.0/8', 'fd00::/8', '*.corp.test', '192.168.1.5'],
      });
      expect(outboundPolicyFromEnv({})).to.deep.equal({ allow: [] });
      expect(() => outboundPolicyFromEnv({ TOOL_HTTP_ALLOW_HOSTS: '10.0.0.0/33' })).to.throw(/'10\.0\.0\.0\/33' is not a host name, IP address or CIDR range/);
      expect(() => outboundPolicyFromEnv({ TOOL_HTTP_ALLOW_HOSTS: 'http://x/' })).to.throw(/TOOL_HTTP_ALLOW_HOSTS/);
    });

    it('allows a private address by IP, by CIDR, or through an allowed host name', () => {
      expect(() => assertAddressAllowed({ allow: ['10.1.2.3'] }, '10.1.2.3', '10.1.2.3')).not.to.throw();
      expect(() => assertAddressAllowed({ allow: ['10.0.0.0/8'] }, 'db.internal', '10.9.9.9')).not.to.throw();
      expect(() => assertAddressAllowed({ allow: ['fd00::/8'] }, 'fd00::5', 'fd00::5')).not.to.throw();
      expect(() => assertAddressAllowed({ allow: ['db.internal'] }, 'db.internal', '10.9.9.9')).not.to.throw();
      expect(() => assertAddressAllowed({ allow: ['10.0.0.0/16'] }, '10.1.0.1', '10.1.0.1')).to.throw(OutboundRefusedError);
    });

    it('allows a metadata address only when that exact address is listed', () => {
      const metadata = '169.254.169.254';
      expect(() => assertAddressAllowed({ allow: ['169.254.0.0/16'] }, metadata, metadata)).to.throw(/cloud metadata/);
      expect(() => assertAddressAllowed({ allow: ['innocent.test'] }, 'innocent.test', metadata)).to.throw(/the address of innocent\.test is not allowed/);
      expect(() => assertAddressAllowed({ allow: [metadata] }, metadata, metadata)).not.to.throw();
      expect(() => assertAddressAllowed({ allow: ['169.254.0.0/16'] }, '169.254.1.1', '169.254.1.1')).not.to.throw();
    });
  });
});
