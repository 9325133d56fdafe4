/**
 * The Content-Type of a multipart form's file part as sent, parameters included.
 *
 * busboy reports a file part's type without its parameters, yet a declared `charset=` is what decodes a
 * text file labelled, say, ISO-8859-1 (activities/conversion/charset.ts): short Latin text is easily
 * mistaken for another single-byte charset. So the body's bytes are also kept here, each before the
 * parser sees it, until the parser announces the file part; that part's headers are then read from them
 * and nothing more is kept. What precedes the file is bounded by the form's field limits.
 */
export class PartContentTypeTap {
  private kept: Buffer[] = [];
  private keeping = true;

  constructor(private readonly boundary: string) {}

  /** Every chunk of the body, before the parser is given it. */
  readonly take = (chunk: Buffer): void => {
    if (this.keeping) this.kept.push(chunk);
  };

  /** Called when the parser announces the file part named `fieldName`: its Content-Type header, if it had one. */
  contentTypeOf(fieldName: string): string | undefined {
    const raw = Buffer.concat(this.kept).toString('latin1');
    this.stop();
    // A part's content cannot hold its delimiter, so every match begins a part's headers.
    const delimiter = `--${this.boundary}\r\n`;
    let contentType: string | undefined;
    for (let at = raw.indexOf(delimiter); at !== -1; at = raw.indexOf(delimiter, at + delimiter.length)) {
      const start = at + delimiter.length;
      const end = raw.indexOf('\r\n\r\n', start);
      if (end === -1) break;
      const headers = headerValues(raw.slice(start, end));
      if (partName(headers.get('content-disposition')) === fieldName) contentType = headers.get('content-type');
    }
    // Stored with the document: printable ASCII of a sane length, or busboy's own reading.
    return contentType !== undefined && /^[\x20-\x7e]{1,255}$/.test(contentType) ? contentType : undefined;
  }

  /** Keeps nothing more (the part was found, or the upload was refused). */
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

function headerValues(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

/** The `name` parameter of a Content-Disposition (not `filename`, which also ends in "name"). */
function partName(disposition: string | undefined): string | undefined {
  const match = /;\s*name\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(disposition ?? '');
  return match ? (match[1] ?? match[2]) : undefined;
}
