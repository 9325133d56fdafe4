/** A stretch of text, as UTF-16 offsets `[start, end)` the way RegExp reports them. */
export interface Span {
  start: number;
  end: number;
}

export const REDACTED = '[REDACTED]';

/**
 * Replaces each span with what `replacement` makes of the text it covers. Spans must be sorted and
 * must not overlap (every producer here guarantees both).
 */
export function replaceSpans<S extends Span>(text: string, spans: readonly S[], replacement: (span: S, covered: string) => string): string {
  let result = '';
  let cursor = 0;
  for (const span of spans) {
    result += text.slice(cursor, span.start) + replacement(span, text.slice(span.start, span.end));
    cursor = span.end;
  }
  return result + text.slice(cursor);
}

export function overlaps(a: Span, b: Span): boolean {
  return a.start < b.end && b.start < a.end;
}

/** Every non-empty match of a global regex, as spans. Empty matches are skipped: they cover nothing to flag. */
export function matchSpans(pattern: RegExp, text: string): Span[] {
  const spans: Span[] = [];
  for (const match of text.matchAll(pattern)) {
    if (match[0].length > 0) spans.push({ start: match.index, end: match.index + match[0].length });
  }
  return spans;
}
