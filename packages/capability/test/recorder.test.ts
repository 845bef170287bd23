// The usage recorder without the platform: batches by size and by time, the same ids on every retry,
// refused records dropped and reported while the rest go again, close() sending what is left. A fake fetch
// answers as the platform would.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Capability } from '../src/index.ts';

interface Sent {
  records: { id: string; value: number }[];
}

function platform(answer: (sent: Sent, n: number) => Response) {
  const sent: Sent[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit) => {
    const body = JSON.parse(String(init?.body)) as Sent;
    sent.push(body);
    return answer(body, sent.length);
  };
  const capability = new Capability({
    apiKey: `pk_cap_${'a'.repeat(32)}`,
    baseUrl: 'http://platform.test',
    fetch,
  });
  return { sent, capability };
}
const ok = (sent: Sent) =>
  new Response(JSON.stringify({ accepted: sent.records.length, duplicates: 0 }), { status: 200 });

describe('the usage recorder', () => {
  test('batches by size; every record keeps its id; close sends the rest', async () => {
    const { sent, capability } = platform(ok);
    const recorder = capability.recorder({ batchSize: 3, flushIntervalMs: 60_000 });
    const ids = Array.from({ length: 7 }, (_, i) =>
      recorder.record({ projectId: 'p', metric: 'm', value: i + 1 }),
    );
    await recorder.flush();
    assert.deepEqual(
      sent.map((s) => s.records.length),
      [3, 3, 1],
    );
    assert.deepEqual(
      sent.flatMap((s) => s.records.map((r) => r.id)),
      ids,
    );
    assert.equal(await recorder.close(), 0);
  });

  test('a batch that got no answer goes again with the same ids', async () => {
    const { sent, capability } = platform((body, n) =>
      n === 1 ? new Response('', { status: 503 }) : ok(body),
    );
    const errors: number[] = [];
    const recorder = capability.recorder({ onError: (error) => errors.push(error.status) });
    recorder.record({ projectId: 'p', metric: 'm', id: 'msg-1' });
    await recorder.flush();
    assert.ok(sent.length >= 2);
    assert.deepEqual(new Set(sent.map((s) => s.records[0]?.id)), new Set(['msg-1']));
    assert.equal(recorder.pending, 0);
    await recorder.close();
  });

  test('records the platform refuses are reported and dropped; the rest go again', async () => {
    const { sent, capability } = platform((body, n) =>
      n === 1
        ? new Response(
            JSON.stringify({
              code: 'VALIDATION_FAILED',
              status: 400,
              detail: 'a record is not valid',
              errors: [{ pointer: '/records/1/projectId', detail: 'no such project' }],
            }),
            { status: 400 },
          )
        : ok(body),
    );
    const refused: string[] = [];
    const recorder = capability.recorder({
      onError: (_error, records) => refused.push(...records.map((r) => r.id)),
    });
    for (const id of ['a', 'b', 'c']) recorder.record({ projectId: 'p', metric: 'm', id });
    await recorder.close();
    assert.deepEqual(refused, ['b']);
    assert.deepEqual(
      sent[1]?.records.map((r) => r.id),
      ['a', 'c'],
    );
  });

  test('close gives up after its time limit and says how many were left', async () => {
    const { capability } = platform(() => new Response('', { status: 503 }));
    const recorder = capability.recorder();
    recorder.record({ projectId: 'p', metric: 'm' });
    assert.equal(await recorder.close(200), 1);
    assert.throws(() => recorder.record({ projectId: 'p', metric: 'm' }), /closed/);
  });
});
