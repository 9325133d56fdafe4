import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * An in-memory OAuth client for the SDK's StreamableHTTPClientTransport, as a native MCP client (a
 * desktop app with a loopback redirect) would be: public client, PKCE, dynamic registration. Instead of
 * opening a browser, `redirectToAuthorization` remembers the address for the test to visit.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl = 'http://127.0.0.1:9/callback';
  authorizationUrl: URL | undefined;
  client: OAuthClientInformationMixed | undefined;
  savedTokens: OAuthTokens | undefined;
  private verifier: string | undefined;

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'MCP test client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.savedTokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}

/**
 * Plays the user at the authorization page: follows the authorization address, signs in with
 * `email`/`password` when asked, approves the consent for `tenantId`, and answers the `code` the page
 * redirects to `redirectUri` with. Cookies are kept between steps, as a browser would.
 */
export async function approveInBrowser(
  authorizationUrl: URL,
  user: { email: string; password: string; tenantId: string },
  redirectUri: string,
): Promise<{ code: string; state: string | null; trail: string[] }> {
  const cookies = new Map<string, string>();
  const trail: string[] = [];
  let request: { url: string; method: 'GET' | 'POST'; form?: URLSearchParams } = { url: authorizationUrl.href, method: 'GET' };
  for (let step = 0; step < 8; step++) {
    const response = await fetch(request.url, {
      method: request.method,
      redirect: 'manual',
      headers: {
        ...(cookies.size > 0 && { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') }),
        ...(request.form && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      body: request.form?.toString(),
    });
    for (const setCookie of response.headers.getSetCookie()) {
      const [pair] = setCookie.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
    trail.push(`${request.method} ${new URL(request.url).pathname} → ${response.status}`);

    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const target = new URL(location, request.url);
      if (target.href.startsWith(redirectUri)) {
        const error = target.searchParams.get('error');
        if (error) throw new Error(`authorization failed: ${error}: ${target.searchParams.get('error_description')} (${trail.join(', ')})`);
        return { code: target.searchParams.get('code')!, state: target.searchParams.get('state'), trail };
      }
      request = { url: target.href, method: 'GET' };
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`the authorization page answered ${response.status}: ${page.slice(0, 500)} (${trail.join(', ')})`);

    const form = forms(page).find((candidate) => ['sign_in', 'consent'].includes(candidate.fields.get('action') ?? ''));
    if (!form) throw new Error(`no sign-in or consent form on the page: ${page.slice(0, 1000)}`);
    const fields = new URLSearchParams([...form.fields]);
    if (form.fields.get('action') === 'sign_in') {
      fields.set('email', user.email);
      fields.set('password', user.password);
    } else {
      if (!fields.has('tenant_id') || form.selects.includes('tenant_id')) fields.set('tenant_id', user.tenantId);
      fields.set('decision', 'approve');
    }
    request = { url: new URL(form.action, request.url).href, method: 'POST', form: fields };
  }
  throw new Error(`no redirect to the client after ${trail.join(', ')}`);
}

interface Form {
  action: string;
  fields: Map<string, string>;
  selects: string[];
}

/** The POST forms of a page with their hidden fields (the pages are the service's own, simple HTML). */
function forms(page: string): Form[] {
  return [...page.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].map((match) => {
    const action = attribute(match[1]!, 'action') ?? '';
    const fields = new Map<string, string>();
    for (const input of match[2]!.matchAll(/<input\b([^>]*)>/gi)) {
      if (attribute(input[1]!, 'type') !== 'hidden') continue;
      const name = attribute(input[1]!, 'name');
      if (name) fields.set(name, attribute(input[1]!, 'value') ?? '');
    }
    const selects = [...match[2]!.matchAll(/<select\b([^>]*)>/gi)].map((select) => attribute(select[1]!, 'name') ?? '');
    return { action, fields, selects };
  });
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(tag);
  return match ? decodeEntities(match[1]!) : undefined;
}

function decodeEntities(text: string): string {
  const named: Record<string, string> = { quot: '"', apos: "'", lt: '<', gt: '>', amp: '&' };
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity.startsWith('#x') || entity.startsWith('#X')) return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)));
    return named[entity.toLowerCase()] ?? whole;
  });
}
