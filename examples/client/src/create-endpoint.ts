// Declares where a project's events go, and sends it a signed test event.
//   node src/create-endpoint.ts URL [TYPE,TYPE…]      e.g. https://hooks.example.com/pay 'pay.*'
import { createHash } from 'node:crypto';
import { args, platform } from './platform.ts';

const [url = '', types = '*'] = args('create-endpoint.ts URL [TYPE,TYPE…]', 1);
// The idempotency key names this intended creation (visible ASCII, at most 255 characters): run again
// after a lost answer, it replays the first answer rather than making a second endpoint.
const intent = createHash('sha256').update(`${url} ${types}`).digest('hex');
const endpoint = await platform.webhookEndpoints.create(
  { url, eventTypes: types.split(',') },
  { idempotencyKey: `create-endpoint-${intent}` },
);
console.log(`endpoint ${endpoint.id} for ${endpoint.eventTypes.join(', ')}`);
console.log(`its signing secret, shown only now; give it to the receiver: ${endpoint.secret}`);
if (endpoint.unknownEventTypes.length)
  console.log(`not in the catalogue yet (a typo?): ${endpoint.unknownEventTypes.join(', ')}`);
const test = await platform.webhookEndpoints.sendTest(endpoint.id);
console.log(`sent a core.webhook.test event: ${test.eventId}`);
