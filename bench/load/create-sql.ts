// A reference for idempotent creates: the SQL of one create exactly as the service sends it (a sole
// write: the claim, the endpoint insert, its audit entry and the record in one statement, one round trip),
// from a raw pg loop with no HTTP and no service work. It is the ceiling the service's creates can approach
// on this machine. Projects are taken as the HTTP load takes its keys: windows of 64, each making 20 creates.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { auditInto } from '../../src/audit/store.ts';
import { soleStatement } from '../../src/idempotency/sole.ts';
import { endpointStore } from '../../src/webhooks/store.ts';
import { summary } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  url: string;
  connections: number;
  duration: number;
  projects: string[];
};
const WINDOW = 64;
const USES = 20;
const pool = new pg.Pool({ connectionString: config.url, max: config.connections });
const prefix = randomUUID();
const latencies: number[] = [];
const deadline = performance.now() + config.duration * 1000;
let next = 0;
let errors = 0;

/** One create, as the service's sole write sends it. */
async function create(client: pg.PoolClient, projectId: string, key: string) {
  const now = new Date();
  const id = randomUUID();
  const along: pg.QueryConfig[] = [];
  auditInto(
    { actor: { type: 'key', keyId: randomUUID() }, requestId: 'req-1' },
    { beforeCommit: (statement) => along.push(statement) },
  )({
    action: 'endpoint.created',
    projectId,
    target: { type: 'endpoint', id },
    fields: ['url', 'eventTypes'],
  });
  const endpoint = {
    id,
    url: 'https://93.184.216.34/hook',
    eventTypes: ['pay.payment.succeeded'],
    sealedSecret: randomBytes(65), // as long as a sealed 32-byte secret
    createdAt: now,
    name: null,
    description: null,
    metadata: {},
    headerNames: [],
    sealedHeaders: null,
    filter: null,
    auth: null,
    tls: null,
  };
  // Its type is outside the registry and undeclared, as the HTTP load's is.
  const write = endpointStore(client).insertSole(projectId, endpoint, endpoint.eventTypes, []);
  // As long as the sealed body of a create's answer (measured: 293 bytes).
  const recorded = { fingerprint: randomBytes(32), status: 201, sealedBody: randomBytes(293) };
  await client.query(
    soleStatement(write, along, { projectId, key, fingerprint: recorded.fingerprint, now }, recorded),
  );
}

await Promise.all(
  Array.from({ length: config.connections }, async () => {
    const client = await pool.connect();
    while (performance.now() < deadline) {
      const n = next++;
      const index = Math.floor(n / (WINDOW * USES)) * WINDOW + (n % WINDOW);
      const projectId = config.projects[index % config.projects.length] as string;
      const started = performance.now();
      try {
        await create(client, projectId, `${prefix}-${n}`);
        latencies.push(performance.now() - started);
      } catch (error) {
        if (errors++ === 0) console.error(error); // the first, to tell why; the count fails the run
        await client.query('rollback').catch(() => {});
      }
    }
    client.release();
  }),
);
await pool.end();
console.log(JSON.stringify(summary(latencies, errors, config.duration)));
