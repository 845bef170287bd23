// A webhook receiver for the delivery benchmarks, in a process of its own: POST /ok/* answers 204,
// POST /delay/* answers 204 after 1 ms, POST /slow/* never answers (the sender times out). 1 % of deliveries are kept for signature checks.
// GET /stats reports counts per path and the samples, GET /counts the counts alone, GET /ids how many
// distinct (path, webhook-id) pairs arrived and how many arrivals in all (duplicates are the difference);
// POST /reset clears them.
import { createReceiver } from '../../support/receiver.ts';

const counts: Record<string, number> = {};
let samples: { path: string; body: string; headers: Record<string, unknown> }[] = [];
let seen = 0;
const ids = new Set<string>();
let arrivals = 0;
const json = (value: unknown) => JSON.stringify(value);

const receiver = await createReceiver(({ method, path, body, headers }, response) => {
  if (method === 'GET' && path === '/stats') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(json({ counts, samples }));
    return;
  }
  if (method === 'GET' && path === '/counts') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(json(counts));
    return;
  }
  if (method === 'GET' && path === '/ids') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(json({ unique: ids.size, arrivals }));
    return;
  }
  if (method === 'POST' && path === '/reset') {
    for (const key of Object.keys(counts)) delete counts[key];
    samples = [];
    ids.clear();
    arrivals = 0;
    response.writeHead(204).end();
    return;
  }
  if (path.startsWith('/slow')) return; // hold the request: the sender's time-out ends it
  counts[path] = (counts[path] ?? 0) + 1;
  arrivals++;
  ids.add(`${path} ${headers['webhook-id']}`);
  if (seen++ % 100 === 0) samples.push({ path, body, headers });
  if (path.startsWith('/delay')) setTimeout(() => response.writeHead(204).end(), 1);
  else response.writeHead(204).end();
});
console.log(`listening on ${receiver.url}`);
