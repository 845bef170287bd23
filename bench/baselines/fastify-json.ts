// A reference, not a baseline: Fastify alone (no hooks, no auth) answering the same JSON, to show how
// much of the api benchmark's gap to bare node:http is the framework's.
import Fastify from 'fastify';

const body = JSON.parse(process.argv[2] ?? '{}');
const app = Fastify({ logger: false });
app.get('/', async () => body);
console.log(`listening on ${await app.listen({ port: 0, host: '127.0.0.1' })}`);
