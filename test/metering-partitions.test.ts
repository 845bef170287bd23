// The dedup storage of usage records stays bounded: ids live in 35-day generations, a record is checked
// against its own generation and the one before (so an id sent again a generation later is still a
// duplicate), and maintenance drops every generation older than that whole, with reservations' days.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  dropOldPartitions,
  ensurePartitions,
  GENERATION_DAYS,
  generationOf,
} from '../src/plane/metering/partitions.ts';
import { meteringStore } from '../src/plane/metering/store.ts';
import { startService } from './helpers/app.ts';

const DAY = 86_400_000;
const service = await startService({ env: { PLATFORM_RATE_LIMIT_PER_SECOND: '0' } });
const cap = await service.capability('meter', {
  manifest: {
    description: 'Metered',
    scopes: [],
    metrics: [{ name: 'units', description: 'Units' }],
    eventTypes: [],
    providers: [],
    erasure: null,
    gateway: null,
  },
});

const partitions = async () => {
  const { rows } = await service.db.query<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'usage_records'::regclass order by 1`,
  );
  return rows.map((row) => row.name);
};

describe('usage record ids, by generation', () => {
  test('an id is a duplicate in the next generation too; generations past that are dropped whole', async () => {
    const tenant = await service.tenant();
    const sent = await service.request('POST', '/capability/v1/usage', {
      key: cap.key,
      body: { records: [{ id: 'gen-1', projectId: tenant.projectId, metric: 'units', value: 1 }] },
    });
    assert.deepEqual(sent.body, { accepted: 1, duplicates: 0 });
    const now = new Date();
    const generation = generationOf(now);
    assert.ok((await partitions()).includes(`usage_records_g${generation}`));

    // A generation later, the same id (and one new) arrive: the old one is found in the generation before.
    const later = new Date(now.getTime() + GENERATION_DAYS * DAY);
    await ensurePartitions(service.db, later);
    const record = (id: string) => ({
      id,
      projectId: tenant.projectId,
      metric: 'units',
      value: 1,
      day: '2026-01-01',
    });
    const accepted = await service.db.transaction((tx) =>
      meteringStore(tx).ingest('meter', generation + 1, [record('gen-1'), record('gen-2')]),
    );
    assert.equal(accepted, 1, 'gen-1 was a duplicate, gen-2 new');

    // Dropped: nothing a generation later (its ids are still checked); the whole generation two later.
    const older = (await partitions()).filter(
      (name) => Number(name.slice('usage_records_g'.length)) < generation,
    );
    assert.deepEqual(
      (await dropOldPartitions(service.db, later)).filter((name) => name.startsWith('usage_records')),
      older,
    );
    assert.ok((await partitions()).includes(`usage_records_g${generation}`));
    const twoLater = new Date(now.getTime() + 2 * GENERATION_DAYS * DAY);
    await ensurePartitions(service.db, twoLater);
    const dropped = await dropOldPartitions(service.db, twoLater);
    assert.ok(dropped.includes(`usage_records_g${generation}`), dropped.join());
    assert.ok(
      dropped.some((name) => name.startsWith('usage_reservations_')),
      'old reservation days too',
    );
    assert.deepEqual(await partitions(), [
      `usage_records_g${generation + 1}`,
      `usage_records_g${generation + 2}`,
      `usage_records_g${generation + 3}`,
    ]);
  });
});
