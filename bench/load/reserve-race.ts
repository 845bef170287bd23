// One of several clients racing for a scarce daily limit: `connections` loops reserving 1–3 units at a
// time, alternating between the service's processes, committing every other reservation in full, until
// each loop has been refused 20 times. What it was granted, to be summed across clients and held to the
// limit.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  urls: string[];
  key: string;
  projectId: string;
  metric: string;
  connections: number;
};
const pools = config.urls.map((url) => new Pool(url, { connections: config.connections }));
const run = randomUUID();
let n = 0;
let granted = 0;
let committed = 0;
const refused = 0;
let errors = 0;
let total = 0;

async function post(pool: Pool, path: string, body: unknown) {
  total++;
  const response = await pool.request({
    path,
    method: 'POST',
    headers: {
      'x-api-key': config.key,
      'content-type': 'application/json',
      'idempotency-key': `${run}-${n++}`,
    },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, body: (await response.body.json()) as { id?: string } };
}

await Promise.all(
  Array.from({ length: config.connections }, async (_, loop) => {
    let refusals = 0;
    for (let i = 0; refusals < 20; i++) {
      const pool = pools[(loop + i) % pools.length] as Pool;
      const amount = 1 + ((loop + i) % 3);
      const reserved = await post(pool, '/capability/v1/reservations', {
        projectId: config.projectId,
        metric: config.metric,
        amount,
      }).catch(() => ({ status: 0, body: {} as { id?: string } }));
      if (reserved.status === 429) refusals++;
      else if (reserved.status !== 201) errors++;
      else {
        granted += amount;
        if (i % 2 === 0) {
          const commit = await post(pool, `/capability/v1/reservations/${reserved.body.id}/commit`, {
            amount,
          });
          if (commit.status === 200) committed += amount;
          else errors++;
        }
      }
    }
  }),
);
for (const pool of pools) await pool.close();
console.log(JSON.stringify({ granted, committed, refused, errors, total }));
