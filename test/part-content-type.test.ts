import { expect } from 'chai';
import { multipartBoundary, PartContentTypeTap } from '../api/part-content-type.js';

/**
 * api/part-content-type.ts: the file part's Content-Type as sent, from the body's first bytes. The
 * upload tests (test/knowledge.test.ts) show a declared charset decoding a file; these show what a
 * crafted body can and cannot make it do.
 */
describe('a multipart file part’s declared Content-Type', () => {
  const boundary = 'XyZ';
  const filePart = (type: string, name = 'file') =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="a.txt"\r\nContent-Type: ${type}\r\n\r\nCr\xe8me\r\n`;
  const field = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const closing = `--${boundary}--\r\n`;

  /** The tap fed `body` in chunks of `size` bytes, asked as busboy would be once the file part is announced. */
  const declared = (body: string, size = 1024) => {
    const tap = new PartContentTypeTap(boundary);
    const bytes = Buffer.from(body, 'latin1');
    for (let at = 0; at < bytes.length; at += size) tap.take(bytes.subarray(at, at + size));
    return tap.contentTypeOf('file');
  };

  it('reads the type with its parameters, whatever chunks split the headers', () => {
    const body = field('title', 'Menu') + filePart('text/plain; charset=iso-8859-1') + closing;
    for (const size of [1, 7, 64, 4096]) expect(declared(body, size), `chunks of ${size}`).to.equal('text/plain; charset=iso-8859-1');
    expect(multipartBoundary(`multipart/form-data; boundary="${boundary}"`)).to.equal(boundary);
  });

  it('takes the first part by that name with a filename, not a later field or part of the same name', () => {
    const body = field('file', 'not the file') + filePart('text/plain; charset=iso-8859-2') + filePart('text/html; charset=utf-8') + field('file', 'x') + closing;
    expect(declared(body)).to.equal('text/plain; charset=iso-8859-2');
  });

  it('is not misled by delimiter-like text that is not at a line start', () => {
    const fake = `x--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b"\r\nContent-Type: text/html\r\n\r\n`;
    expect(declared(fake + '\r\n' + filePart('text/plain; charset=iso-8859-1') + closing)).to.equal('text/plain; charset=iso-8859-1');
  });

  // A quadratic scan took seconds for a 100 KB preamble of such text and minutes for 4 MB, blocking the
  // event loop: a generous bound catches that, not speed.
  it('reads a preamble full of near-delimiters in one pass', function () {
    this.timeout(10_000);
    const preamble = `x--${boundary}\r\n`.repeat(30_000);
    expect(preamble.length).to.be.below(256 * 1024);
    expect(declared(preamble + filePart('text/plain; charset=iso-8859-1') + closing, 64 * 1024)).to.equal('text/plain; charset=iso-8859-1');
  });

  it('keeps at most 256 KB: a file part after more than that is left to busboy’s own reading', () => {
    const body = field('notes', 'n'.repeat(300 * 1024)) + filePart('text/plain; charset=iso-8859-1') + closing;
    expect(declared(body, 64 * 1024)).to.equal(undefined);
  });

  it('gives nothing for a type that is not printable ASCII of at most 255 characters', () => {
    expect(declared(filePart('text/plain; charset=\x01') + closing)).to.equal(undefined);
    expect(declared(filePart(`text/plain; x=${'a'.repeat(300)}`) + closing)).to.equal(undefined);
  });
});
