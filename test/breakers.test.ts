// The breakers of capabilities' providers, through HTTP: instances report them (PUT /capability/v1/breakers),
// health lists every declared provider as `capability/provider` with the state most live instances report
// (a tie takes the worse; none live: unknown), and the operator reads the reports of each instance.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expectProblem, startService } from './helpers/app.ts';
import { eventually } from './helpers/receiver.ts';

const service = await startService();
const manifest = {
  description: 'Messages to people',
  scopes: [],
  metrics: [],
  eventTypes: [],
  providers: [
    { name: 'mailer', description: 'The e-mail provider' },
    { name: 'sms', description: 'The SMS provider' },
  ],
  erasure: null,
  gateway: null,
};
const notify = await service.capability('notify', { manifest });
const tenant = await service.tenant();
const operator = await service.operator();
let n = 0;
const report = (instance: string, providers: { provider: string; state: string }[], key = notify.key) =>
  service.request('PUT', '/capability/v1/breakers', {
    key,
    body: { instance, providers },
    headers: { 'idempotency-key': `report-${++n}` },
  });
const health = async () => (await service.request('GET', '/api/health', { key: tenant.key })).body;
/** Waits for health (cached for a second) to show these states of notify's providers. */
const healthShows = (states: Record<string, string>) =>
  eventually(
    async () => {
      const body = await health();
      const shown = Object.fromEntries(
        body.breakers.map((b: { provider: string; state: string }) => [b.provider, b.state]),
      );
      return Object.entries(states).every(([provider, state]) => shown[provider] === state) && body;
    },
    5000,
    JSON.stringify(states),
  );
/** Ages every report of an instance past its 30 s life. */
const age = (instance: string) =>
  service.db.query(
    `update capability_breaker_reports set reported_at = now() - interval '31 seconds' where instance = $1`,
    [instance],
  );

describe('capability breakers', () => {
  test('none reported: each declared provider is unknown, and health is degraded naming it', async () => {
    const body = await healthShows({ 'notify/mailer': 'unknown', 'notify/sms': 'unknown' });
    assert.equal(body.status, 'degraded');
    assert.deepEqual(
      body.reasons.filter((r: { code: string }) => r.code === 'breaker_unknown'),
      [
        {
          code: 'breaker_unknown',
          message: 'no live instance of notify reports the breaker of notify/mailer',
        },
        { code: 'breaker_unknown', message: 'no live instance of notify reports the breaker of notify/sms' },
      ],
    );
  });

  test('204 per report; health takes what most live instances report, a tie the worse', async () => {
    const closed = [
      { provider: 'mailer', state: 'closed' },
      { provider: 'sms', state: 'closed' },
    ];
    for (const instance of ['a', 'b']) {
      const answer = await report(instance, closed);
      assert.equal(answer.status, 204, answer.text);
      assert.equal(answer.text, '');
    }
    const ok = await healthShows({ 'notify/mailer': 'closed', 'notify/sms': 'closed' });
    assert.equal(ok.status, 'ok');
    assert.deepEqual(ok.reasons, []);

    // One of three sees the mailer open: most say closed.
    await report('c', [
      { provider: 'mailer', state: 'open' },
      { provider: 'sms', state: 'half_open' },
    ]);
    assert.equal((await healthShows({ 'notify/mailer': 'closed', 'notify/sms': 'closed' })).status, 'ok');

    // b stops reporting: one closed, one open, a tie: the worse.
    await age('b');
    const tie = await healthShows({ 'notify/mailer': 'open', 'notify/sms': 'half_open' });
    assert.equal(tie.status, 'degraded');
    assert.deepEqual(tie.reasons, [
      { code: 'breaker_open', message: 'the circuit breaker of notify/mailer is open' },
    ]);

    // An instance reports again: its row is replaced, not added.
    await report('c', closed);
    const again = await healthShows({ 'notify/mailer': 'closed', 'notify/sms': 'closed' });
    assert.equal(again.status, 'ok');
    const { rows } = await service.db.query(
      `select count(*)::int as n from capability_breaker_reports where instance = 'c'`,
    );
    assert.equal(rows[0]?.n, 2);

    // Nobody reports any more: unknown again.
    await age('a');
    await age('c');
    await healthShows({ 'notify/mailer': 'unknown', 'notify/sms': 'unknown' });
  });

  test('the operator reads each instance’s live report', async () => {
    await report('d', [{ provider: 'mailer', state: 'half_open' }]);
    const read = await service.request('GET', '/admin/v1/capabilities/notify', { key: operator.key });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(
      read.body.breakerReports.map((r: { instance: string; provider: string; state: string }) => [
        r.instance,
        r.provider,
        r.state,
      ]),
      [['d', 'mailer', 'half_open']],
      'aged reports are not live',
    );
    assert.ok(Math.abs(Date.parse(read.body.breakerReports[0].reportedAt) - Date.now()) < 10_000);
  });

  test('refused (400): a provider not declared, a bad state or shape, no idempotency key', async () => {
    const undeclared = await report('a', [{ provider: 'pager', state: 'open' }]);
    expectProblem(undeclared, 400, 'VALIDATION_FAILED');
    assert.deepEqual(undeclared.body.errors, [
      { pointer: '/providers/0/provider', detail: 'notify declares no provider pager' },
    ]);
    expectProblem(await report('a', [{ provider: 'mailer', state: 'broken' }]), 400, 'VALIDATION_FAILED');
    expectProblem(await report('a', []), 400, 'VALIDATION_FAILED');
    expectProblem(await report('', [{ provider: 'mailer', state: 'open' }]), 400, 'VALIDATION_FAILED');
    const keyless = await service.request('PUT', '/capability/v1/breakers', {
      key: notify.key,
      body: { instance: 'a', providers: [{ provider: 'mailer', state: 'open' }] },
    });
    expectProblem(keyless, 400, 'IDEMPOTENCY_KEY_MISSING');
    // A capability without providers declares none: every report is refused.
    const bare = await service.capability('bare', { manifest: { ...manifest, providers: [] } });
    expectProblem(
      await report('a', [{ provider: 'mailer', state: 'open' }], bare.key),
      400,
      'VALIDATION_FAILED',
    );
  });
});
