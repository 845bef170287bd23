// One call to a capability's upstream, through undici's dispatch API: the answer is handed over once its
// headers are in, its body read whole when it is small (or the caller needs it whole) and streamed
// otherwise. undici's `request` makes a Readable stream of every answer, and reading a small one back out
// of it cost the gateway about a tenth of its CPU per request (docs/decisions/measured-choices.md);
// here a small answer's chunks are only collected.
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

export interface UpstreamAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** the whole body, or a stream of it paced by its reader */
  body: Buffer | Readable;
}

/**
 * How an answer is read: whole, to be recorded, up to `max` bytes; or streamed, unless its length is
 * known and at most `small` (then it is collected and sent as one buffer).
 */
export type Reading = WholeReading | { whole: false; small: number };
export type WholeReading = { whole: true; max: number };

/** An answer read whole grew past its bound. */
export class AnswerTooLarge extends Error {}

/** The upstream broke off (or timed out) after its headers, while its body was being read whole. */
export class AnswerBrokenOff extends Error {}

/** An answer read whole. */
export interface WholeAnswer extends UpstreamAnswer {
  body: Buffer;
}

/** Sends a request upstream; settles once the answer's headers are in (or its whole body, when read whole). */
export function callUpstream(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  reading: WholeReading,
): Promise<WholeAnswer>;
export function callUpstream(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  reading: Reading,
): Promise<UpstreamAnswer>;
export function callUpstream(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  reading: Reading,
): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(options, new AnswerReader(reading, resolve, reject));
  });
}

class AnswerReader implements Dispatcher.DispatchHandler {
  readonly #reading: Reading;
  readonly #resolve: (answer: UpstreamAnswer) => void;
  readonly #reject: (error: Error) => void;
  #statusCode = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #stream: Readable | undefined;

  constructor(reading: Reading, resolve: (answer: UpstreamAnswer) => void, reject: (error: Error) => void) {
    this.#reading = reading;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** undici requires it; the request needs nothing done as it starts. */
  onRequestStart() {}

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ) {
    if (statusCode < 200) return; // an informational answer: the real one follows
    this.#statusCode = statusCode;
    this.#headers = headers;
    const length = Number(headers['content-length'] ?? Number.NaN);
    if (this.#reading.whole || length <= this.#reading.small) return;
    this.#stream = new Readable({
      read: () => controller.resume(),
      // The client went away: the upstream's answer is no longer wanted.
      destroy: (error, callback) => {
        if (!controller.aborted && this.#stream?.readableEnded === false)
          controller.abort(error ?? new Error('the client went away'));
        callback(error);
      },
    });
    this.#resolve({ statusCode, headers, body: this.#stream });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (this.#stream) {
      if (!this.#stream.push(chunk)) controller.pause();
      return;
    }
    this.#size += chunk.length;
    // A small answer's length is its own bound (the parser holds the answer to it).
    if (this.#reading.whole && this.#size > this.#reading.max)
      return controller.abort(new AnswerTooLarge(`an answer of over ${this.#reading.max} bytes`));
    this.#chunks.push(chunk);
  }

  onResponseEnd() {
    if (this.#stream) {
      this.#stream.push(null);
      return;
    }
    const body = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    this.#resolve({ statusCode: this.#statusCode, headers: this.#headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    if (this.#stream) this.#stream.destroy(error);
    else if (this.#statusCode === 0 || error instanceof AnswerTooLarge) this.#reject(error);
    else this.#reject(new AnswerBrokenOff('the answer broke off', { cause: error }));
  }
}
