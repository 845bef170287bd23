// Bodies the gateway forwards, bounded: a stream that fails once more than `max` bytes went through (a
// chunked body has no length to check beforehand), and a whole body read up to `max`.
import { Transform, type TransformCallback } from 'node:stream';
import { PlatformError } from '../lib/errors.ts';

export class BoundedBody extends Transform {
  static TooLarge = class extends Error {};
  readonly #max: number;
  #seen = 0;

  constructor(max: number) {
    super();
    this.#max = max;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    this.#seen += chunk.length;
    if (this.#seen > this.#max) return callback(new BoundedBody.TooLarge(`over ${this.#max} bytes`));
    callback(null, chunk);
  }
}

/** A whole body, read as bytes; a 413 past `max`. */
export async function readBounded(stream: unknown, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new PlatformError('PAYLOAD_TOO_LARGE', `a gateway body is at most ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
