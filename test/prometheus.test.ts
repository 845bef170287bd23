// The operator's side: the repository's rules pass `promtool check rules` and their unit tests, and a real
// Prometheus (Debian's) scrapes a running service, evaluates the rules on what it scraped, and answers
// queries with the traffic the test made.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { client } from './helpers/api.ts';
import { startService } from './helpers/app.ts';
import { promtool } from './helpers/metrics.ts';
import { RULES, startPrometheus } from './helpers/prometheus.ts';
import { eventually, startReceiver } from './helpers/receiver.ts';

const RULE_TESTS = new URL('../ops/prometheus/rules.test.yml', import.meta.url).pathname;

describe('alert rules', () => {
  test('promtool check rules: every rule is valid', () => {
    assert.match(promtool(['check', 'rules', RULES]), /SUCCESS: 17 rules found/);
  });

  test('promtool test rules: each alert fires on what it watches, after its `for`, and only then', () => {
    assert.match(promtool(['test', 'rules', RULE_TESTS]), /SUCCESS/);
  });
});

describe('a real Prometheus scraping a running service', () => {
  test('scrapes the metrics listener, evaluates the rules, answers queries with the test’s traffic', {
    timeout: 90_000,
  }, async () => {
    const service = await startService({
      worker: true,
      env: { PLATFORM_METRICS_PORT: '0', PLATFORM_WEBHOOK_ALLOW_PRIVATE: '1', PLATFORM_WORKER_POLL_MS: '50' },
    });
    const target = (service.metricsAddress as string).replace('http://', '');
    const prometheus = await startPrometheus([target]);

    const receiver = await startReceiver();
    const api = client(service, await service.tenant());
    await api.endpoint(receiver.url, ['scrape.test']);
    await api.publish('scrape.test');
    await eventually(async () => receiver.received.length === 1);

    const value = async (expr: string) => {
      const [sample] = await prometheus.query(expr);
      return sample ? Number(sample.value[1]) : undefined;
    };
    await eventually(
      async () => (await value('sum(platform_delivery_attempts_total{outcome="delivered"})')) === 1,
      30_000,
      'the delivery, scraped',
    );
    assert.equal(await value('up{job="platform-core"}'), 1);
    assert.equal(await value('sum(platform_events_published_total)'), 1);
    assert.equal(await value('platform_workers_reporting'), 1);
    assert.equal(await value('platform_database_up'), 1);
    assert.equal(
      await value(
        'sum(platform_http_request_duration_seconds_count{route="/core/v1/events",method="POST",status_code="202"})',
      ),
      1,
    );
    // The recording rules ran on the scraped series.
    await eventually(
      async () => (await value('platform:queue_oldest_due_age_seconds:max')) === 0,
      30_000,
      'a recording rule',
    );
    const { groups } = await prometheus.get('/api/v1/rules');
    const rules = groups.flatMap((group: { rules: { name: string; health: string }[] }) => group.rules);
    assert.equal(rules.length, 17);
    assert.deepEqual(
      rules.filter((rule: { health: string }) => rule.health !== 'ok'),
      [],
      'every rule evaluates without error',
    );
    const firing = await prometheus.query('ALERTS{alertstate="firing"}');
    assert.deepEqual(firing, [], 'a healthy service fires no alert');
  });
});
