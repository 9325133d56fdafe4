/**
 * The Content-Type of a multipart form's file part as sent, parameters included.
 *
 * busboy reports a file part's type without its parameters, yet a declared `charset=` is what decodes a
 * text file labelled, say, ISO-8859-1 (activities/conversion/charset.ts): short Latin text is easily
 * mistaken for another single-byte charset. So the body's first bytes are also kept here, each chunk
 * before the parser sees it, until the parser announces the file part; that part's headers are then
 * read from them and nothing more is kept. At most KEPT_LIMIT bytes are kept: a file part that comes
 * later (after a long preamble or many fields) is read by busboy's type alone.
 */
const KEPT_LIMIT = 256 * 1024;
/** busboy's own limit on a part's header block. */
const MAX_HEADER_BYTES = 16 * 1024;

export class PartContentTypeTap {
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private keeping = true;

  constructor(private readonly boundary: string) {}

  /** Every chunk of the body, before the parser is given it. */
  readonly take = (chunk: Buffer): void => {
    if (!this.keeping) return;
    this.keptBytes += chunk.length;
    if (this.keptBytes > KEPT_LIMIT) this.stop();
    else this.kept.push(chunk);
  };

  /**
   * Called when the parser announces the file part named `fieldName`: the Content-Type header of the
   * first part by that name with a filename, if the kept bytes hold it. One pass, linear in what is kept.
   */
  contentTypeOf(fieldName: string): string | undefined {
    const raw = Buffer.concat(this.kept).toString('latin1');
    this.stop();
    // A delimiter is CRLF "--boundary" (or "--boundary" at the very start), then optional padding and
    // CRLF; content cannot hold one, so each begins a part's headers.
    const delimiter = `\r\n--${this.boundary}`;
    let at = raw.startsWith(delimiter.slice(2)) ? -2 : raw.indexOf(delimiter);
    while (at !== -1) {
      const next = raw.indexOf(delimiter, at + delimiter.length);
      const start = partHeadersStart(raw, at + delimiter.length);
      if (start === undefined) return undefined;
      const block = raw.slice(start, Math.min(next === -1 ? raw.length : next, start + MAX_HEADER_BYTES));
      const end = block.indexOf('\r\n\r\n');
      if (end !== -1) {
        const headers = headerValues(block.slice(0, end));
        const disposition = headers.get('content-disposition');
        if (parameter(disposition, 'name') === fieldName && parameter(disposition, 'filename') !== undefined) {
          return usable(headers.get('content-type'));
        }
      }
      at = next;
    }
    return undefined;
  }

  /** Keeps nothing more (the part was found, it came too late, or the upload ended). */
  stop(): void {
    this.keeping = false;
    this.kept = [];
  }
}

/** The boundary of a `multipart/form-data` Content-Type; undefined without one. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2]) : undefined;
}

/** Where a part's headers begin after its delimiter: past transport padding and CRLF; undefined for the closing delimiter. */
function partHeadersStart(raw: string, afterDelimiter: number): number | undefined {
  let at = afterDelimiter;
  while (raw[at] === ' ' || raw[at] === '\t') at++;
  return raw.startsWith('\r\n', at) ? at + 2 : undefined;
}

function headerValues(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

const PARAMETERS = {
  name: /;\s*name\s*=\s*(?:"([^"]*)"|([^;\s]*))/i,
  // RFC 5987's `filename*=` names a file too, as busboy takes it.
  filename: /;\s*filename\*?\s*=\s*(?:"([^"]*)"|([^;\s]*))/i,
};

/** A Content-Disposition parameter; `name` is not matched inside `filename`. */
function parameter(disposition: string | undefined, name: keyof typeof PARAMETERS): string | undefined {
  const match = PARAMETERS[name].exec(disposition ?? '');
  return match ? (match[1] ?? match[2]) : undefined;
}

/** Stored with the document: printable ASCII of a sane length, or else busboy's own reading. */
function usable(contentType: string | undefined): string | undefined {
  return contentType !== undefined && /^[\x20-\x7e]{1,255}$/.test(contentType) ? contentType : undefined;
}
