import net from 'node:net';
import type { JsonSchema } from '../json-schema/types.js';

/**
 * A saved sign-in's storage state, in the format Playwright's `context.storageState()` writes: the
 * cookies and the local storage of a signed-in browser. It is checked here (shape, size, and that it
 * belongs to the sign-in's origin) before it is sealed.
 */

export interface StorageCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix time in seconds; -1 for a session cookie. */
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite: 'Strict' | 'Lax' | 'None';
  /** Written by newer Playwright versions for partitioned (CHIPS) cookies; accepted, and dropped before it is stored. */
  partitionKey?: string;
}

export interface StorageState {
  cookies: StorageCookie[];
  origins: Array<{ origin: string; localStorage: Array<{ name: string; value: string }> }>;
}

/** The JSON text of a storage state, sealed, may be at most this long. */
export const MAX_STORAGE_STATE_BYTES = 512 * 1024;
const MAX_COOKIES = 500;
const MAX_LOCAL_STORAGE_ITEMS = 1000;
const MAX_SECONDS = 253402300799; // 9999-12-31T23:59:59Z

const text = (maxLength: number): JsonSchema => ({ type: 'string', maxLength });

/** Closed objects throughout: a misspelled field would otherwise be dropped without a word. */
export const storageStateSchema: JsonSchema = {
  type: 'object',
  required: ['cookies', 'origins'],
  additionalProperties: false,
  description:
    'Cookies and local storage as Playwright\'s `context.storageState()` writes them. Every cookie\'s domain must be the origin\'s host ' +
    'or a parent domain of it that is not a public suffix, and every `origins[].origin` the sign-in\'s origin. At most 512 KiB as JSON.',
  properties: {
    cookies: {
      type: 'array',
      maxItems: MAX_COOKIES,
      items: {
        type: 'object',
        required: ['name', 'value', 'domain', 'path', 'expires', 'httpOnly', 'secure', 'sameSite'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^[^;=\\s\\u0000-\\u001f\\u007f]+$' },
          value: { type: 'string', maxLength: 8192, pattern: '^[^;\\u0000-\\u001f\\u007f]*$' },
          domain: { type: 'string', minLength: 1, maxLength: 253, pattern: '^\\.?[A-Za-z0-9._\\[\\]:-]+$' },
          path: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^/[^;\\s]*$' },
          expires: {
            anyOf: [{ const: -1 }, { type: 'number', exclusiveMinimum: 0, maximum: MAX_SECONDS }],
            description: 'Unix time in seconds (after 1970); -1 for a session cookie.',
          },
          httpOnly: { type: 'boolean' },
          secure: { type: 'boolean' },
          sameSite: { enum: ['Strict', 'Lax', 'None'] },
          partitionKey: { ...text(2048), description: 'Accepted as newer Playwright versions write it, and dropped: the browser tool loads cookies unpartitioned.' },
        },
      },
    },
    origins: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['origin', 'localStorage'],
        additionalProperties: false,
        properties: {
          origin: { type: 'string', maxLength: 2048 },
          localStorage: {
            type: 'array',
            maxItems: MAX_LOCAL_STORAGE_ITEMS,
            items: { type: 'object', required: ['name', 'value'], additionalProperties: false, properties: { name: text(4096), value: text(MAX_STORAGE_STATE_BYTES) } },
          },
        },
      },
    },
  },
};

/** `scheme://host[:port]` with nothing after it, or undefined when `value` is not one. */
export function parseOrigin(value: string): string | undefined {
  if (!URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  // Port 0 parses, but no page is ever served from it.
  if (url.port === '0') return undefined;
  if (value.replace(/\/$/, '') !== url.origin) return undefined;
  return url.origin;
}

/**
 * What is wrong with `state` for a sign-in of `origin` (schema-valid already): its size, a cookie for
 * another site, local storage of another origin. Cookies are refused rather than dropped: a sign-in
 * that silently lost cookies would fail later, at a run, with nothing to say why.
 */
export function storageStateProblems(state: StorageState, origin: string): Array<{ field: string; message: string }> {
  const problems: Array<{ field: string; message: string }> = [];
  if (Buffer.byteLength(JSON.stringify(state)) > MAX_STORAGE_STATE_BYTES) {
    problems.push({ field: 'body.storage_state', message: `is larger than ${MAX_STORAGE_STATE_BYTES} bytes as JSON` });
  }
  const host = new URL(origin).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  state.cookies.forEach((cookie, i) => {
    if (!cookieDomainFits(cookie.domain, host)) {
      problems.push({ field: `body.storage_state.cookies[${i}].domain`, message: `'${cookie.domain}' is not ${host} or a parent domain of it that is not a public suffix` });
    }
  });
  state.origins.forEach((entry, i) => {
    if (parseOrigin(entry.origin) !== origin) {
      problems.push({ field: `body.storage_state.origins[${i}].origin`, message: `must be the sign-in's origin, ${origin}` });
    }
  });
  return problems;
}

/**
 * RFC 6265 domain-matching of the sign-in's host: the host itself, or (for a name) a parent domain of
 * at least two labels that is not a public suffix (`.example.com` for `app.example.com`, never `.com`,
 * `.co.uk` or `.github.io`). An IP address matches only itself. The public suffixes are a short list of
 * common ones, not the whole Public Suffix List: the tool sends the cookies to the sign-in's exact
 * origin only, so this check is about refusing a state that plainly was not cut to one site.
 */
function cookieDomainFits(domain: string, host: string): boolean {
  const bare = domain.replace(/^\./, '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === host) return true;
  if (net.isIP(host)) return false;
  return bare.includes('.') && host.endsWith(`.${bare}`) && !isPublicSuffix(bare);
}

// Second-level suffixes of country domains (co.uk, com.au, ne.jp…) and hosting suffixes where each
// subdomain is another party's site.
const COUNTRY_SECOND_LEVEL = /^(ac|co|com|edu|gov|go|govt|ltd|me|mil|ne|net|nhs|nom|or|org|plc|sch)\.[a-z]{2}$/;
const HOSTING_SUFFIXES = new Set([
  'github.io', 'gitlab.io', 'herokuapp.com', 'vercel.app', 'netlify.app', 'pages.dev', 'workers.dev', 'web.app', 'firebaseapp.com',
  'appspot.com', 'blogspot.com', 'azurewebsites.net', 'cloudfront.net', 'fly.dev', 'onrender.com', 'glitch.me', 'repl.co',
  's3.amazonaws.com', 'amazonaws.com', 'cloudapp.net', 'azurestaticapps.net', 'ngrok.io', 'ngrok-free.app', 'readthedocs.io',
]);

function isPublicSuffix(domain: string): boolean {
  return COUNTRY_SECOND_LEVEL.test(domain) || HOSTING_SUFFIXES.has(domain);
}

/** The state as the browser tool loads it: without `partitionKey`, which would put cookies in a partition no page of the call is in. */
export function withoutPartitionKeys(state: StorageState): StorageState {
  const cookies = state.cookies.map((cookie) => {
    const copy = { ...cookie };
    delete copy.partitionKey;
    return copy;
  });
  return { ...state, cookies };
}

/** What a sign-in shows in place of its storage state. */
export interface StorageStateSummary {
  cookie_count: number;
  cookie_domains: string[];
  local_storage_count: number;
  /** The earliest expiry among cookies that have one; null when all are session cookies. */
  cookies_expire_at: Date | null;
}

export function summarizeStorageState(state: StorageState): StorageStateSummary {
  const expiries = state.cookies.map((cookie) => cookie.expires).filter((seconds) => seconds > 0);
  return {
    cookie_count: state.cookies.length,
    cookie_domains: [...new Set(state.cookies.map((cookie) => cookie.domain.toLowerCase()))].sort(),
    local_storage_count: state.origins.reduce((count, entry) => count + entry.localStorage.length, 0),
    cookies_expire_at: expiries.length ? new Date(Math.min(...expiries) * 1000) : null,
  };
}
