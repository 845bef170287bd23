// receivers: what an endpoint's filter costs a publish. Two projects of 10 endpoints each subscribed to
// the type, one with a typical filter on every endpoint (that the events match), one without; the same
// events published to each through the API, same service, same load, rounds alternated. The deliveries
// are queued, not sent (no worker): the filter's cost is where it is evaluated, in the publish.
import {
  alternate,
  type BenchResult,
  errorsOf,
  type Measure,
  platformEnv,
  ratioFigure,
  runLoad,
  startPlatform,
} from './lib.ts';
import { migrated, seedTenants } from './seed.ts';

const CONNECTIONS = 32;
const DURATION = 4;
const ROUNDS = 5;
const ENDPOINTS = 10;

/** Patterns of the kind receivers write: by amount and currency, by a prefix, by a field's presence. */
const FILTERS = [
  { data: { amount: [{ numeric: ['>', 0] }], currency: ['EUR', 'USD', 'GBP'] } },
  { type: [{ prefix: 'pay.' }] },
  { data: { customer: { id: [{ exists: true }] } } },
  { data: { currency: [{ 'anything-but': ['JPY'] }] } },
  { $or: [{ data: { amount: [{ numeric: ['>=', 1000] }] } }, { data: { channel: ['web'] } }] },
];

const DATA = {
  paymentId: 'pay_8Jd2Kq91',
  amount: 4200,
  currency: 'EUR',
  customer: { id: 'cus_31', email: 'ada@example.com' },
  channel: 'web',
  createdAt: '2026-11-26T10:00:00Z',
};

export async function receivers(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const [plain, filtered] = await seedTenants(databaseUrl, 2, 'rcv');
  if (!plain || !filtered) throw new Error('no tenants');
  const service = await startPlatform('serve', platformEnv(databaseUrl));
  try {
    let n = 0;
    const endpoints = async (key: string, filter: (i: number) => unknown) => {
      for (let i = 0; i < ENDPOINTS; i++) {
        const created = await fetch(`${service.baseUrl}/core/v1/webhook-endpoints`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': `e${n++}` },
          body: JSON.stringify({
            url: `https://93.184.216.34/h${i}`,
            eventTypes: ['pay.*'],
            filter: filter(i),
          }),
        });
        if (created.status !== 201) throw new Error(`endpoint: ${created.status} ${await created.text()}`);
      }
    };
    await endpoints(plain.key, () => null);
    await endpoints(filtered.key, (i) => FILTERS[i % FILTERS.length]);
    let prefix = 0;
    const publish = (key: string) => () =>
      runLoad<Measure>('http.ts', {
        url: `${service.baseUrl}/core/v1/events`,
        method: 'POST',
        body: JSON.stringify({ type: 'pay.payment.succeeded', data: DATA }),
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        idempotency: 'fresh',
        prefix: `p${prefix++}`,
        connections: CONNECTIONS,
        duration: DURATION,
      });
    const rounds = await alternate(ROUNDS, publish(plain.key), publish(filtered.key));
    return {
      name: 'receivers',
      figures: [
        ratioFigure(
          `publish to ${ENDPOINTS} endpoints each with a filter the event matches vs without (c=${CONNECTIONS})`,
          rounds,
          0.9,
        ),
      ],
      checks: [],
      errors: errorsOf(rounds),
    };
  } finally {
    await service.stop();
  }
}
