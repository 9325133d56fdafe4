import { createHash, randomBytes } from 'node:crypto';
import { testPlatform } from './global.js';
import { fetchFrom, REGISTRATION_ADDRESS } from './oauth-local-address.js';
import type { TestUser } from './oauth-users.js';

/**
 * The OAuth flow without a browser, for the many negative cases: a fetch-based user agent with a cookie
 * jar that reads the authorize page's forms and posts them back, and raw token-endpoint requests.
 */

export interface PageResponse {
  status: number;
  headers: Headers;
  body: string;
}

/** A browser as far as the authorize page can tell: cookies, forms, no redirects followed. */
export class FormBrowser {
  readonly cookies = new Map<string, string>();

  async get(url: string): Promise<PageResponse> {
    return this.send(url, { method: 'GET' });
  }

  async post(url: string, fields: Iterable<[string, string]>): Promise<PageResponse> {
    return this.send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([...fields]).toString(),
    });
  }

  private async send(url: string, init: RequestInit): Promise<PageResponse> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(new URL(url, testPlatform().apiUrl), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return { status: response.status, headers: response.headers, body: await response.text() };
  }
}

/** The forms of a page, each as its fields (hidden inputs, the select's first option, and the submit buttons' values). */
export function formsOf(html: string): Array<Map<string, string>> {
  return [...html.matchAll(/<form\b[^>]*>([\s\S]*?)<\/form>/g)].map(([, inner]) => {
    const fields = new Map<string, string>();
    for (const [input] of inner!.matchAll(/<input\b[^>]*>/g)) {
      const name = attribute(input, 'name');
      if (name && attribute(input, 'type') === 'hidden') fields.set(name, attribute(input, 'value') ?? '');
    }
    return fields;
  });
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match?.[1]!.replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)));
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function registerClient(metadata: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const response = await fetchFrom(REGISTRATION_ADDRESS)(`${testPlatform().apiUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, body: await response.json() };
}

export interface ClientRegistration {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
}

export async function registerPublicClient(redirectUri = 'http://127.0.0.1:9/callback'): Promise<ClientRegistration> {
  const { body } = await registerClient({ client_name: 'Test client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' });
  return { clientId: body.client_id, redirectUri };
}

/** The authorize address for these parameters. */
export function authorizeUrl(parameters: Record<string, string | undefined>): string {
  const query = new URLSearchParams(Object.entries(parameters).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return `${testPlatform().apiUrl}/oauth/authorize?${query}`;
}

/** Opens the authorize page and signs in; answers the consent page (or whatever came instead). */
export async function signInToConsent(browser: FormBrowser, url: string, user: TestUser): Promise<PageResponse> {
  const signInPage = await browser.get(url);
  const form = formsOf(signInPage.body)[0];
  if (!form) return signInPage;
  const signedIn = await browser.post('/oauth/authorize', [...form, ['email', user.email], ['password', user.password]]);
  if (signedIn.status !== 303) return signedIn;
  return browser.get(new URL(signedIn.headers.get('location')!, `${testPlatform().apiUrl}/oauth/authorize`).href);
}

/** Presses Approve (or Deny) on a consent page; answers the response, a 303 to the client when all is well. */
export async function decide(browser: FormBrowser, consentPage: PageResponse, decision: 'approve' | 'deny', tenantId?: string): Promise<PageResponse> {
  const form = formsOf(consentPage.body).find((fields) => fields.get('action') === 'consent');
  if (!form) throw new Error(`no consent form on the page (status ${consentPage.status}):\n${consentPage.body}`);
  if (tenantId) form.set('tenant_id', tenantId);
  return browser.post('/oauth/authorize', [...form, ['decision', decision]]);
}

export interface AuthorizationOptions {
  client: ClientRegistration;
  user: TestUser;
  tenantId?: string;
  challenge?: string;
  resource?: string;
  /** Whether to send redirect_uri (default true). */
  sendRedirectUri?: boolean;
}

/** Runs the whole authorize step for a user and answers the code from the redirect. */
export async function obtainCode(options: AuthorizationOptions): Promise<string> {
  const browser = new FormBrowser();
  const consent = await signInToConsent(
    browser,
    authorizeUrl({
      response_type: 'code',
      client_id: options.client.clientId,
      redirect_uri: options.sendRedirectUri === false ? undefined : options.client.redirectUri,
      code_challenge: options.challenge,
      code_challenge_method: options.challenge ? 'S256' : undefined,
      state: 'state-1',
      resource: options.resource,
    }),
    options.user,
  );
  const approved = await decide(browser, consent, 'approve', options.tenantId);
  const location = approved.headers.get('location');
  if (approved.status !== 303 || !location) throw new Error(`approval answered ${approved.status}:\n${approved.body}`);
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

/** POSTs a form to the token endpoint (or another OAuth endpoint). */
export async function postToken(fields: Record<string, string | undefined>, options: { path?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Headers; body: any }> {
  const form = new URLSearchParams(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const response = await fetch(`${testPlatform().apiUrl}${options.path ?? '/oauth/token'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
    body: form.toString(),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** A public client's tokens for the user, the short way: authorize with PKCE, then exchange. */
export async function obtainTokens(options: Omit<AuthorizationOptions, 'challenge'>): Promise<{ access_token: string; refresh_token: string; [field: string]: unknown }> {
  const { verifier, challenge } = pkcePair();
  const code = await obtainCode({ ...options, challenge });
  const response = await postToken({
    grant_type: 'authorization_code',
    client_id: options.client.clientId,
    code,
    redirect_uri: options.client.redirectUri,
    code_verifier: verifier,
    resource: options.resource,
  });
  if (response.status !== 200) throw new Error(`token exchange answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}
