// The capability SDK's usage recorder: the caller's CPU per record() (process CPU time over the records,
// batches sent to a platform that answers at once, in-process, so only the recorder's own work counts),
// or, as the baseline, a plain recorder: a record object with a new UUID and an ISO time, kept in an array,
// and each batch serialised once. The fake platform only counts the records it gets (without parsing
// them: that would be the platform's work, not the caller's).
import { readFileSync } from 'node:fs';
import { Capability } from '../../packages/capability/src/index.ts';
import { cpuPerOperation } from './summary.ts';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  mode: 'sdk' | 'minimal';
  records: number;
};
const BATCH = 500;
const projectId = '00000000-0000-4000-8000-000000000001';
let sent = 0;
const recordsIn = (body: string) => body.split('"projectId"').length - 1;
const answer = JSON.stringify({ accepted: BATCH, duplicates: 0 });
const platform = new Capability({
  apiKey: `pk_cap_${'a'.repeat(32)}`,
  baseUrl: 'http://platform.test',
  fetch: async (_url, init) => {
    sent += recordsIn(String(init?.body));
    return new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } });
  },
});

const cpu = process.cpuUsage();
if (config.mode === 'sdk') {
  const recorder = platform.recorder({ batchSize: BATCH, flushIntervalMs: 1000 });
  for (let i = 0; i < config.records; i++) {
    recorder.record({ projectId, metric: 'messages_sent' });
    // A service records between requests: let the batches go out as they would.
    if (i % BATCH === BATCH - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  await recorder.close();
} else {
  let batch: object[] = [];
  for (let i = 0; i < config.records; i++) {
    batch.push({
      id: crypto.randomUUID(),
      projectId,
      metric: 'messages_sent',
      value: 1,
      time: new Date().toISOString(),
    });
    if (batch.length === BATCH) {
      sent += recordsIn(JSON.stringify({ records: batch }));
      batch = [];
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
const perRecordMicros = cpuPerOperation(cpu, config.records);
if (sent !== config.records) throw new Error(`sent ${sent} of ${config.records}`);
console.log(
  JSON.stringify({
    rate: 1e6 / perRecordMicros,
    perRecordMicros,
    errors: 0,
    total: config.records,
  }),
);
