// Publishes an event: it is stored with its deliveries in one transaction, so none is ever lost.
//   node src/publish.ts TYPE DATA_JSON [IDEMPOTENCY_KEY]
//   e.g. node src/publish.ts pay.payment.succeeded '{"amount": 4200, "currency": "EUR"}' order-42-paid
import { PlatformError } from '@platform-core/client';
import { args, platform } from './platform.ts';

const [type = '', data = '{}', key] = args('publish.ts TYPE DATA_JSON [IDEMPOTENCY_KEY]', 2);
try {
  // Give the key of the business fact (the order that was paid): a retry, even from another process,
  // then publishes once.
  const published = await platform.events.publish(
    { type, data: JSON.parse(data) },
    key ? { idempotencyKey: key } : undefined,
  );
  console.log(`event ${published.eventId}: ${published.deliveries} delivery(ies)`);
} catch (error) {
  if (!(error instanceof PlatformError)) throw error;
  // A refusal says what was wrong, member by member.
  console.error(`${error.status} ${error.code}: ${error.message}`);
  for (const problem of error.errors ?? []) console.error(`  ${problem.pointer}: ${problem.detail}`);
  process.exit(1);
}
