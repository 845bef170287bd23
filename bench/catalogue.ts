// catalogue: what a type's schema costs. Publishing events of a declared type with a typical schema
// (small and large data) against publishing the same events of an undeclared type, and declaring a type
// with that schema against declaring one without a schema; same service, same load, rounds alternated.
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

/** A schema of the kind a payments product declares: a few typed fields, formats, a pattern, a nested list. */
export const TYPICAL_SCHEMA = {
  type: 'object',
  required: ['paymentId', 'amount', 'currency', 'customer', 'createdAt'],
  properties: {
    paymentId: { type: 'string', pattern: '^pay_[A-Za-z0-9]{4,32}$' },
    amount: { type: 'integer', minimum: 0 },
    currency: { enum: ['EUR', 'USD', 'GBP', 'CHF', 'JPY'] },
    customer: {
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'string' }, email: { type: 'string', format: 'email' } },
    },
    createdAt: { type: 'string', format: 'date-time' },
    lines: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        required: ['sku', 'quantity'],
        properties: { sku: { type: 'string', maxLength: 64 }, quantity: { type: 'integer', minimum: 1 } },
      },
    },
    metadata: { type: 'object', additionalProperties: { type: 'string', maxLength: 500 } },
  },
};

const dataOf = (lines: number) => ({
  paymentId: 'pay_8Jd2Kq91',
  amount: 4200,
  currency: 'EUR',
  customer: { id: 'cus_31', email: 'ada@example.com' },
  createdAt: '2026-11-26T10:00:00Z',
  lines: Array.from({ length: lines }, (_, i) => ({ sku: `sku-${i}`, quantity: 1 + (i % 3) })),
  metadata: { order: 'A-1009', channel: 'web' },
});

export async function catalogue(databaseUrl: string): Promise<BenchResult> {
  await migrated(databaseUrl);
  const [tenant] = await seedTenants(databaseUrl, 1, 'cat');
  if (!tenant) throw new Error('no tenant');
  const service = await startPlatform('serve', platformEnv(databaseUrl));
  const headers = { 'x-api-key': tenant.key, 'content-type': 'application/json' };
  try {
    const declared = await fetch(`${service.baseUrl}/core/v1/event-types/pay.payment.succeeded`, {
      method: 'PUT',
      headers: { ...headers, 'idempotency-key': 'declare' },
      body: JSON.stringify({ description: 'A payment.', schema: TYPICAL_SCHEMA, example: dataOf(1) }),
    });
    if (declared.status !== 200) throw new Error(`declaring: ${declared.status} ${await declared.text()}`);
    let prefix = 0;
    const load = (url: string, method: 'POST' | 'PUT', body: unknown) => () =>
      runLoad<Measure>('http.ts', {
        url: `${service.baseUrl}${url}`,
        method,
        body: JSON.stringify(body),
        headers,
        idempotency: 'fresh',
        prefix: `r${prefix++}`,
        connections: CONNECTIONS,
        duration: DURATION,
      });
    const publish = (type: string, lines: number) =>
      load('/core/v1/events', 'POST', { type, data: dataOf(lines) });
    const small = await alternate(
      ROUNDS,
      publish('pay.payment.unchecked', 2),
      publish('pay.payment.succeeded', 2),
    );
    const large = await alternate(
      ROUNDS,
      publish('pay.payment.unchecked', 400),
      publish('pay.payment.succeeded', 400),
    );
    const declare = (schema: object | null) =>
      load('/core/v1/event-types/pay.refund.created', 'PUT', {
        description: 'A refund.',
        schema,
        example: schema ? dataOf(1) : null,
      });
    const declarations = await alternate(ROUNDS, declare(null), declare(TYPICAL_SCHEMA));
    const bytes = (lines: number) => JSON.stringify(dataOf(lines)).length;
    return {
      name: 'catalogue',
      figures: [
        {
          ...ratioFigure(
            `publish with a typical schema vs no schema, ${bytes(2)} B of data (c=${CONNECTIONS})`,
            small,
          ),
        },
        {
          ...ratioFigure(
            `publish with a typical schema vs no schema, ${bytes(400)} B of data (c=${CONNECTIONS})`,
            large,
          ),
        },
        {
          ...ratioFigure(
            `declare a type with a typical schema vs without a schema (c=${CONNECTIONS})`,
            declarations,
          ),
        },
      ],
      checks: [],
      errors: [errorsOf(small), errorsOf(large), errorsOf(declarations)].reduce((sum, e) => ({
        failed: sum.failed + e.failed,
        total: sum.total + e.total,
      })),
    };
  } finally {
    await service.stop();
  }
}
