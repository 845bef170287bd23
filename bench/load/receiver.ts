// A webhook receiver for the delivery benchmarks, in a process of its own: POST /ok/* answers 204,
// POST /slow/* never answers (the sender times out). 1 % of deliveries are kept for signature checks.
// GET /stats reports counts per path and the samples, GET /counts the counts alone; POST /reset clears them.
import { createServer } from 'node:http';

const counts: Record<string, number> = {};
let samples: { path: string; body: string; headers: Record<string, unknown> }[] = [];
let seen = 0;
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const url = request.url ?? '/';
    if (request.method === 'GET' && url === '/stats') {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ counts, samples }));
      return;
    }
    if (request.method === 'GET' && url === '/counts') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
      return;
    }
    if (request.method === 'POST' && url === '/reset') {
      for (const key of Object.keys(counts)) delete counts[key];
      samples = [];
      response.writeHead(204).end();
      return;
    }
    if (url.startsWith('/slow')) return; // hold the request: the sender's time-out ends it
    counts[url] = (counts[url] ?? 0) + 1;
    if (seen++ % 100 === 0)
      samples.push({ path: url, body: Buffer.concat(chunks).toString(), headers: request.headers });
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
