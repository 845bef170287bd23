// The baseline of the gateway: a bare reverse proxy, what any proxy in front of a product must at least
// do. A node:http server forwards each request's method, path and headers through an undici Pool to the
// upstream given as its argument, reads the (small) answer whole and sends it back; no key, no scope, no
// limits, no signature.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = process.argv[2] as string;
const pool = new Pool(upstream, { connections: 128 });
const server = createServer(async (request, response) => {
  try {
    const answer = await pool.request({
      path: request.url ?? '/',
      method: request.method as 'GET',
      headers: { accept: request.headers.accept ?? '*/*' },
    });
    const body = Buffer.from(await answer.body.arrayBuffer());
    response.writeHead(answer.statusCode, {
      'content-type': String(answer.headers['content-type'] ?? 'application/octet-stream'),
      'content-length': body.length,
    });
    response.end(body);
  } catch {
    response.writeHead(502).end();
  }
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
