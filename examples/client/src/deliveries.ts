// An endpoint's deliveries, newest first, with their attempts; --retry-dead asks again for the dead ones.
//   node src/deliveries.ts ENDPOINT_ID [--retry-dead]
import { args, platform } from './platform.ts';

const [endpointId = '', flag] = args('deliveries.ts ENDPOINT_ID [--retry-dead]', 1);
let shown = 0;
for await (const delivery of platform.webhookEndpoints.iterateDeliveries(endpointId, { limit: 50 })) {
  const last = delivery.attempts[0]; // newest first
  const answer = last ? (last.statusCode ?? last.error) : 'not tried yet';
  const waiting = delivery.waitReason ? ` (waiting: ${delivery.waitReason})` : '';
  console.log(`${delivery.createdAt}  ${delivery.eventType}  ${delivery.state}${waiting}  ${answer}`);
  if (flag === '--retry-dead' && delivery.state === 'dead') {
    const retried = await platform.deliveries.retry(delivery.id);
    console.log(`  retried as delivery ${retried.deliveryId}`);
  }
  if (++shown === 200) break; // the iterator fetches a page only when the loop reaches it
}
if (shown === 0) console.log('no deliveries yet');
