// ordered-delivery: one endpoint ordered as a whole (one delivery in flight, in publish order) on a
// receiver answering after 1 ms, against a raw loop of signed POSTs to the same receiver one at a time:
// what one-at-a-time to a 1 ms receiver allows. Also its ratio to the same deliveries unordered.
// fairness: ten endpoints, one throttled to 10/s; the nine others' throughput against theirs without it.
import { randomUUID } from 'node:crypto';
import { prepare } from './delivery.ts';
import {
  alternate,
  type BenchResult,
  errorsOf,
  type Figure,
  type Measure,
  ratioFigure,
  runLoad,
} from './lib.ts';

const ROUNDS = 5;
const DATA_BODY = (type: string) =>
  JSON.stringify({
    id: randomUUID(),
    type,
    timestamp: new Date().toISOString(),
    data: { order: 'x'.repeat(1000) },
  });

export async function orderedDelivery(databaseUrl: string): Promise<BenchResult> {
  const DELIVERIES = 2000;
  const setup = await prepare(databaseUrl);
  try {
    const [ordered] = await setup.endpoints(1, '/delay', { ordering: 'endpoint' });
    const [unordered] = await setup.endpoints(1, '/delay');
    if (!ordered || !unordered) throw new Error('no endpoints');
    const oneAtATime = () =>
      runLoad<Measure>('post-loop.ts', {
        urls: [setup.receiver + ordered.path],
        total: DELIVERIES,
        connections: 1,
        body: DATA_BODY('pay.payment.succeeded'),
      });
    const inOrder = () => setup.round([{ endpoint: ordered, deliveries: DELIVERIES }], [ordered]);
    const asTheyCome = () => setup.round([{ endpoint: unordered, deliveries: DELIVERIES }], [unordered]);
    const rounds = await alternate(ROUNDS, oneAtATime, inOrder);
    const versusUnordered = await alternate(ROUNDS, asTheyCome, inOrder);
    const figures: Figure[] = [
      {
        ...ratioFigure(
          `${DELIVERIES} deliveries to one ordered endpoint (1 ms receiver) vs signed POSTs one at a time`,
          rounds,
          0.9,
        ),
        notes: 'one in flight, in publish order: the ceiling is one request at a time',
      },
      {
        ...ratioFigure(`the same, ordered vs unordered (c=${128 / 4} to one endpoint)`, versusUnordered),
        notes: 'what ordering costs against concurrent sends',
      },
    ];
    return {
      name: 'ordered-delivery',
      figures,
      checks: [await setup.verifySamples([ordered, unordered])],
      errors: errorsOf(rounds),
    };
  } finally {
    await setup.close();
  }
}

export async function fairness(databaseUrl: string): Promise<BenchResult> {
  const DELIVERIES = 18_000;
  const setup = await prepare(databaseUrl);
  try {
    const healthy = await setup.endpoints(9, '/ok');
    const [throttled] = await setup.endpoints(1, '/ok', { rateLimitPerSecond: 10 });
    if (!throttled) throw new Error('no throttled endpoint');
    const plan = healthy.map((endpoint) => ({ endpoint, deliveries: DELIVERIES / 9 }));
    const without = () => setup.round(plan, healthy);
    const withThrottled = () => setup.round([...plan, { endpoint: throttled, deliveries: 2000 }], healthy);
    const rounds = await alternate(ROUNDS, without, withThrottled);
    return {
      name: 'fairness',
      figures: [
        {
          ...ratioFigure(
            'nine endpoints’ throughput beside a tenth throttled to 10/s (2,000 queued for it), vs without it',
            rounds,
            0.9,
          ),
          notes: 'the throttled endpoint’s deliveries wait at their slots, out of the others’ way',
        },
      ],
      checks: [await setup.verifySamples([...healthy, throttled])],
      errors: errorsOf(rounds),
    };
  } finally {
    await setup.close();
  }
}
