// idempotent-write: POST /core/v1/webhook-endpoints with fresh idempotency keys against a raw
// single-row INSERT loop through pg, at concurrency 8 and 32; as a reference, the same creates' SQL sent
// from a raw pg loop (the ceiling the service can approach); replays of used keys against the list route;
// and a correctness gate: 32 concurrent identical requests make one endpoint.
import pg from 'pg';
import {
  alternate,
  type BenchResult,
  type Check,
  errorsOf,
  type Figure,
  type Measure,
  platformEnv,
  ratioFigure,
  runLoad,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

const DURATION = 4;
const ROUNDS = 5;
// Every project holds at most 20 endpoints: each run takes keys of its own, each key making 20 creates
// (as a client reuses its key): 24 windows of 64 keys, enough for 7,680 creates a second. The SQL
// reference runs take projects of their own the same way.
const PROJECTS = 40_000;
const KEYS_PER_RUN = 24 * 64;
const CREATES_PER_KEY = 20;
const BODY = JSON.stringify({ url: 'https://93.184.216.34/hook', eventTypes: ['pay.payment.succeeded'] });

export async function idempotentWrite(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const tenants = await seedTenants(databaseUrl, PROJECTS, 'iw');
  const keys = tenants.map((t) => t.key);
  const service = await startPlatform('serve', platformEnv(databaseUrl));
  const figures: Figure[] = [];
  const checks: Check[] = [];
  let failed = 0;
  let total = 0;
  let batch = 0;
  const replayKeys = keys.slice(0, 200);
  let cursor = replayKeys.length;
  try {
    const create = (connections: number) => () => {
      const runKeys = keys.slice(cursor, cursor + KEYS_PER_RUN);
      cursor += KEYS_PER_RUN;
      if (runKeys.length < KEYS_PER_RUN) throw new Error('idempotent-write: out of seeded projects');
      return runLoad<Measure>('http.ts', {
        url: `${service.baseUrl}/core/v1/webhook-endpoints`,
        method: 'POST',
        body: BODY,
        headers: { 'content-type': 'application/json' },
        connections,
        duration: DURATION,
        keys: runKeys,
        keyUses: CREATES_PER_KEY,
        idempotency: 'fresh',
        prefix: `w${batch++}`,
      });
    };
    const insert = (connections: number) => () =>
      runLoad<Measure>('insert-loop.ts', { url: databaseUrl, connections, duration: DURATION });
    const createSql = (connections: number) => () => {
      const projects = tenants.slice(cursor, cursor + KEYS_PER_RUN).map((t) => t.projectId);
      cursor += KEYS_PER_RUN;
      if (projects.length < KEYS_PER_RUN) throw new Error('idempotent-write: out of seeded projects');
      return runLoad<Measure>('create-sql.ts', {
        url: databaseUrl,
        connections,
        duration: DURATION,
        projects,
      });
    };
    for (const connections of [8, 32]) {
      const rounds = await alternate(ROUNDS, insert(connections), create(connections));
      const sqlRounds = await alternate(ROUNDS, insert(connections), createSql(connections));
      figures.push(
        ratioFigure(
          `POST /core/v1/webhook-endpoints, fresh keys, vs raw INSERT loop (c=${connections})`,
          rounds,
          0.6,
        ),
        {
          ...ratioFigure(
            `reference: the same creates' SQL from a raw pg loop vs raw INSERT loop (c=${connections})`,
            sqlRounds,
          ),
          notes: 'the ceiling for the row above: the database work of a create, without HTTP or the service',
        },
      );
      for (const errors of [errorsOf(rounds), errorsOf(sqlRounds)]) {
        failed += errors.failed;
        total += errors.total;
      }
    }

    // Replays: requests whose (key, idempotency-key) was used already, against the list route's rate.
    const used: [string, string][] = [];
    for (const [i, key] of replayKeys.entries()) {
      const idempotencyKey = `replay-${i}`;
      const response = await fetch(`${service.baseUrl}/core/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body: BODY,
      });
      if (response.status !== 201 && response.status !== 400)
        throw new Error(`replay seed: ${response.status}`);
      used.push([key, idempotencyKey]);
    }
    const list = () =>
      runLoad<Measure>('http.ts', {
        url: `${service.baseUrl}/core/v1/webhook-endpoints`,
        connections: 32,
        duration: DURATION,
        keys: replayKeys,
      });
    const replay = () =>
      runLoad<Measure>('http.ts', {
        url: `${service.baseUrl}/core/v1/webhook-endpoints`,
        method: 'POST',
        body: BODY,
        headers: { 'content-type': 'application/json' },
        connections: 32,
        duration: DURATION,
        idempotency: used,
      });
    const replayRounds = await alternate(ROUNDS, list, replay);
    figures.push(
      ratioFigure('POST replay of a used key vs GET /core/v1/webhook-endpoints (c=32)', replayRounds, 0.8),
    );
    const errors = errorsOf(replayRounds);
    failed += errors.failed;
    total += errors.total;

    // The gate: 32 concurrent identical requests make exactly one endpoint.
    const [gate] = await seedTenants(databaseUrl, 1, 'gate');
    if (!gate) throw new Error('no gate tenant');
    const responses = await Promise.all(
      Array.from({ length: 32 }, () =>
        fetch(`${service.baseUrl}/core/v1/webhook-endpoints`, {
          method: 'POST',
          headers: { 'x-api-key': gate.key, 'content-type': 'application/json', 'idempotency-key': 'gate' },
          body: BODY,
        }).then((r) => r.status),
      ),
    );
    const client = new pg.Client(databaseUrl);
    await client.connect();
    const { rows } = await client.query(
      'select count(*)::int as n from webhook_endpoints where project_id = $1',
      [gate.projectId],
    );
    await client.end();
    checks.push({
      name: '32 concurrent identical requests make one endpoint',
      ok: rows[0]?.n === 1 && responses.every((s) => s === 201 || s === 409),
      detail: `${rows[0]?.n} endpoint(s); statuses ${[...new Set(responses)].join(',')}`,
    });
  } finally {
    await service.stop();
  }
  return { name: 'idempotent-write', figures, checks, errors: { failed, total } };
}
