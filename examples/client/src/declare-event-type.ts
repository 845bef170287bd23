// Declares an event type in the project's catalogue, with the JSON Schema its data must match and an
// example: the portal shows both, and a publish whose data does not match is refused with a 400.
//   node src/declare-event-type.ts
import { platform } from './platform.ts';

const type = await platform.eventTypes.put('pay.payment.succeeded', {
  description: 'A payment was captured',
  schema: {
    type: 'object',
    required: ['amount', 'currency'],
    properties: {
      amount: { type: 'integer', minimum: 1, description: 'in minor units' },
      currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    },
  },
  example: { amount: 4200, currency: 'EUR' },
});
console.log(`declared ${type.name}: ${type.description} (${type.subscribers} endpoint(s) subscribed)`);
