// The development receiver of `platform dev`: a webhook endpoint on loopback that checks each delivery's
// Standard Webhooks signature with the endpoint's secret and prints it, so the first event is seen arriving
// without writing a receiver. A delivery that does not verify is answered 401 (and retried, as a real
// receiver would make it).
import { createSecretKey, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureHeader } from '../lib/signature.ts';

const MAX_BODY = 1024 * 1024;
const TOLERANCE_SECONDS = 300;
const SHOWN_DATA = 600;

export interface DevReceiver {
  url: string;
  /** the endpoint's secrets (whsec_…) the signatures are checked with */
  secrets: string[];
  close(): Promise<void>;
}

export async function startDevReceiver(
  host: string,
  port: number,
  print: (line: string) => void,
): Promise<DevReceiver> {
  const receiver = { secrets: [] as string[] };
  const server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    if (body === undefined) return void response.writeHead(413).end();
    const verdict = verify(request, body, receiver.secrets);
    print(describe(request, body, verdict));
    response.writeHead(verdict === 'verified' ? 204 : 401).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return Object.assign(receiver, {
    url: `http://${hostPart}:${address.port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

async function bodyOf(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

type Verdict = 'verified' | string;

/** 'verified', or why not. */
function verify(request: IncomingMessage, body: string, secrets: string[]): Verdict {
  const id = request.headers['webhook-id'];
  const timestamp = Number(request.headers['webhook-timestamp']);
  const signatures = String(request.headers['webhook-signature'] ?? '').split(' ');
  if (typeof id !== 'string' || !Number.isInteger(timestamp)) return 'no Standard Webhooks headers';
  if (Math.abs(Date.now() / 1000 - timestamp) > TOLERANCE_SECONDS) return 'timestamp out of tolerance';
  // What the worker would sign with these secrets, entry by entry, compared in constant time.
  const keys = secrets.map((secret) => createSecretKey(Buffer.from(secret.replace(/^whsec_/, ''), 'base64')));
  const expected = keys.length ? signatureHeader(keys, id, timestamp, body).split(' ') : [];
  const same = (a: string, b: string) =>
    a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
  if (signatures.some((given) => expected.some((entry) => same(given, entry)))) return 'verified';
  return secrets.length
    ? 'the signature does not match the endpoint secret this receiver knows'
    : 'no secret known yet';
}

function describe(request: IncomingMessage, body: string, verdict: Verdict): string {
  let type = '(not JSON)';
  let data = body;
  try {
    const payload = JSON.parse(body) as { type?: string; data?: unknown };
    type = payload.type ?? '(no type)';
    data = JSON.stringify(payload.data);
  } catch {}
  const time = new Date().toISOString().slice(11, 19);
  const shown = data.length > SHOWN_DATA ? `${data.slice(0, SHOWN_DATA)}…` : data;
  const mark = verdict === 'verified' ? 'signature verified' : `NOT VERIFIED (${verdict}): answered 401`;
  return `${time} ← ${type}  ${request.headers['webhook-id'] ?? ''}  ${mark}\n         ${shown}`;
}
