/**
 * Why a conversion failed, as a stable machine-readable kind. The message of a {@link ConversionError}
 * is the human-readable sentence shown to users as the document's `error`.
 */
export type ConversionErrorKind =
  /** The bytes are not a format we convert (images, random bytes, legacy binary Office files, ...). */
  | 'unsupported'
  /** Password-protected or encrypted (PDF with a user password, encrypted Office package, encrypted zip). */
  | 'encrypted'
  /** A PDF without a text layer (a scan or photo); there is no OCR. */
  | 'no-text-layer'
  /** The document converts to nothing (an empty workbook, a blank text file, ...). */
  | 'empty'
  /** The uncompressed content is over the size limit, or compresses suspiciously well (zip bomb). */
  | 'too-large'
  /** The document relies on something we refuse to follow (its main part lives outside the file). */
  | 'unsafe'
  /** The file is damaged or not what its type claims. */
  | 'corrupt'
  /** The conversion ran past its time limit. */
  | 'timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted';

export class ConversionError extends Error {
  override readonly name = 'ConversionError';
  readonly kind: ConversionErrorKind;

  constructor(kind: ConversionErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

export function isConversionError(err: unknown): err is ConversionError {
  return err instanceof ConversionError;
}

/** A short, single-line description of an unexpected error, for wrapping it in a ConversionError. */
export function describeError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const line = text.split('\n')[0]?.trim() ?? '';
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}
