/** A fragment of HTML whose dynamic parts have been escaped. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/**
 * Tagged template for HTML: every interpolated string is escaped, Html fragments and arrays of them are
 * inserted as they are. Client names and e-mail addresses come from strangers; this is what keeps them text.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The `<head>` every page of the service shares (consent, invites, console, hosted chat): UTF-8, a mobile
 * viewport, no referrer (links must not carry a page's address, which may hold a token), and the page's
 * stylesheet under the nonce its Content-Security-Policy allows.
 */
export function pageHead(title: string, styleNonce: string, style: string): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style nonce="${styleNonce}">${new Html(style)}</style>
</head>`;
}
