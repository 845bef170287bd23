import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CapabilityRegistry, type ErasureRequest } from '../src/registry.ts';
import { expectProblem, startService } from './helpers/app.ts';

const calls: ErasureRequest[] = [];
const registry = new CapabilityRegistry();
registry.register({
  name: 'notify',
  eraser: async (tx, request) => {
    calls.push(request);
    await tx.query('select 1'); // runs inside the erase transaction
    return 3;
  },
});
const service = await startService({ registry });
const tenant = await service.tenant();
let n = 0;

const erase = (body: unknown, key = tenant.key) =>
  service.request('POST', '/core/v1/subjects/erase', {
    key,
    body,
    headers: { 'idempotency-key': `erase-${++n}` },
  });

describe('POST /core/v1/subjects/erase', () => {
  test('validation: 400 VALIDATION_FAILED with a pointer to what is wrong', async () => {
    const cases: [unknown, string][] = [
      [{}, '/subject'],
      [{ subject: { type: 'fax', value: '1' } }, '/subject/type'],
      [{ subject: { type: 'email' } }, '/subject/value'],
      [{ subject: { type: 'email', value: 42 } }, '/subject/value'],
      [{ subject: { type: 'email', value: 'not-an-address' } }, '/subject/value'],
      [{ subject: { type: 'email', value: '' } }, '/subject/value'],
      [{ subject: { type: 'phone', value: '0612345678' } }, '/subject/value'],
      [{ subject: { type: 'phone', value: '+1 415 555' } }, '/subject/value'],
      [{ subject: { type: 'external_id', value: 'a\u0000b' } }, '/subject/value'],
      [{ subject: { type: 'email', value: 'a@b.co' }, extra: true }, '/extra'],
      [{ subject: 'a@b.co' }, '/subject'],
      [[], '/'],
    ];
    for (const [body, pointer] of cases) {
      const response = await erase(body);
      expectProblem(response, 400, 'VALIDATION_FAILED');
      assert.ok(
        response.body.errors?.some((e: { pointer: string }) => e.pointer === pointer),
        `${JSON.stringify(body)} → ${JSON.stringify(response.body.errors)}`,
      );
    }
    assert.equal(calls.length, 0);
  });

  test('malformed JSON → 400, over 1 MiB → 413, not JSON → 415', async () => {
    const send = (rawBody: string | Buffer, contentType: string) =>
      service.request('POST', '/core/v1/subjects/erase', {
        key: tenant.key,
        rawBody,
        headers: { 'content-type': contentType, 'idempotency-key': `raw-${++n}` },
      });
    expectProblem(await send('{"subject": ', 'application/json'), 400, 'VALIDATION_FAILED');
    expectProblem(await send('{"__proto__": {"x": 1}}', 'application/json'), 400, 'VALIDATION_FAILED');
    const huge = JSON.stringify({ subject: { type: 'external_id', value: 'x'.repeat(1024 * 1024) } });
    expectProblem(await send(huge, 'application/json'), 413, 'PAYLOAD_TOO_LARGE');
    expectProblem(
      await send('subject=a', 'application/x-www-form-urlencoded'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectProblem(await send('<subject/>', 'text/xml'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectProblem(await send(Buffer.from([0xff, 0xfe, 0x00]), 'application/json'), 400, 'VALIDATION_FAILED');
    // authentication still comes first
    const anonymous = await service.request('POST', '/core/v1/subjects/erase', {
      rawBody: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expectProblem(anonymous, 401, 'API_KEY_MISSING');
  });

  test('odd unicode is a value like any other, never a 500', async () => {
    for (const value of ['\ud800', '👩‍👩‍👧', 'e\u0301', '\u202eevil', 'ﬀ'.repeat(100)]) {
      const response = await erase({ subject: { type: 'external_id', value } });
      assert.ok(
        [200, 400].includes(response.status),
        `${JSON.stringify(value)} → ${response.status} ${response.text}`,
      );
    }
  });

  test('200: every eraser runs with the normalized subject; the counts come back', async () => {
    calls.length = 0;
    const response = await erase({ subject: { type: 'email', value: '  Alice.Smith@Example.COM ' } });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, {
      erasureId: response.body.erasureId,
      capabilities: [
        { capability: 'core', erased: 0 },
        { capability: 'notify', erased: 3 },
      ],
    });
    assert.match(response.body.erasureId, /^[0-9a-f-]{36}$/);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.subject, { type: 'email', value: 'alice.smith@example.com' });
    assert.equal(calls[0]?.projectId, tenant.projectId);
    assert.equal(calls[0]?.subjectHmac.length, 32);

    const phone = await erase({ subject: { type: 'phone', value: '+14155550100' } });
    assert.equal(phone.status, 200);
    assert.deepEqual(calls[1]?.subject, { type: 'phone', value: '+14155550100' });
  });

  test('e-mail is compared case-insensitively: both spellings hash alike', async () => {
    calls.length = 0;
    await erase({ subject: { type: 'email', value: 'Bob@Example.com' } });
    await erase({ subject: { type: 'email', value: 'bob@example.COM' } });
    assert.deepEqual(calls[0]?.subjectHmac, calls[1]?.subjectHmac);
  });

  test('Core redacts the payloads of events tagged with the subject; ids, types and times stay', async () => {
    const subject = { type: 'external_id' as const, value: 'user-77' };
    const hmac = await service.context.hashSubject(subject);
    const other = await service.tenant();
    const insert = async (projectId: string, tagged: boolean) => {
      const { rows } = await service.db.query(
        `insert into events (project_id, id, type, data, created_at)
         select $1, id, 'pay.payment.succeeded', '{"email": "x@y.z"}', uuid_time(id) from uuid_v7_at(now()) as id
         returning id, created_at`,
        [projectId],
      );
      if (tagged) {
        await service.db.query(
          'insert into event_subjects (project_id, subject_hmac, event_id, event_created_at) values ($1, $2, $3, $4)',
          [projectId, hmac, rows[0]?.id, rows[0]?.created_at],
        );
      }
      return rows[0]?.id as string;
    };
    const tagged = await insert(tenant.projectId, true);
    const untagged = await insert(tenant.projectId, false);
    const otherProject = await insert(other.projectId, true);

    const response = await erase({ subject });
    assert.deepEqual(
      response.body.capabilities.find((c: { capability: string }) => c.capability === 'core'),
      {
        capability: 'core',
        erased: 1,
      },
    );
    const { rows } = await service.db.query(
      'select id, type, data, redacted_at from events where id = any($1)',
      [[tagged, untagged, otherProject]],
    );
    const byId = new Map<string, any>(rows.map((r) => [r.id, r]));
    assert.deepEqual(byId.get(tagged).data, { redacted: true });
    assert.equal(byId.get(tagged).type, 'pay.payment.succeeded');
    assert.ok(byId.get(tagged).redacted_at);
    assert.deepEqual(byId.get(untagged).data, { email: 'x@y.z' });
    assert.deepEqual(byId.get(otherProject).data, { email: 'x@y.z' }, 'another project is untouched');
    const again = await erase({ subject });
    assert.equal(
      again.body.capabilities.find((c: { capability: string }) => c.capability === 'core').erased,
      0,
    );
  });

  test('each erasure is audited with an HMAC of the subject, never the subject', async () => {
    const response = await erase({ subject: { type: 'email', value: 'carol.secret@example.org' } });
    assert.equal(response.status, 200);
    const { rows } = await service.db.query(
      'select * from erasures where project_id = $1 order by created_at desc limit 1',
      [tenant.projectId],
    );
    const row = rows[0]!;
    assert.equal(row.subject_type, 'email');
    assert.equal(row.key_id, tenant.keyId);
    assert.equal(row.subject_hmac.length, 32);
    assert.deepEqual(row.capabilities, response.body.capabilities);
    assert.ok(row.created_at instanceof Date);
    const everything = JSON.stringify(
      (await service.db.query('select * from erasures')).rows.concat(
        (await service.db.query('select * from idempotency_keys')).rows,
      ),
    );
    assert.ok(!everything.toLowerCase().includes('carol'), 'the subject appears in clear');
  });

  test('a failing eraser rolls the whole erasure back (no audit row) and releases the key', async () => {
    const failing = new CapabilityRegistry();
    failing.register({
      name: 'billing',
      eraser: async () => {
        throw new Error('billing store down');
      },
    });
    const broken = await startService({ registry: failing });
    const who = await broken.tenant();
    const request = () =>
      broken.request('POST', '/core/v1/subjects/erase', {
        key: who.key,
        body: { subject: { type: 'external_id', value: 'u' } },
        headers: { 'idempotency-key': 'same' },
      });
    expectProblem(await request(), 500, 'INTERNAL');
    const { rows } = await broken.db.query('select count(*) as n from erasures');
    assert.equal(Number(rows[0]?.n), 0);
    expectProblem(await request(), 500, 'INTERNAL'); // not a replay: the key was released
  });
});
