// A consumer of a NATS JetStream destination (the official client): each message's data is the webhook
// payload, and its headers carry webhook-id (also its Nats-Msg-Id), webhook-timestamp and webhook-signature.
// Run: WEBHOOK_SECRETS=whsec_… NATS_SERVERS=localhost:4222 STREAM=EVENTS node nats.mjs
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';

const secrets = process.env.WEBHOOK_SECRETS.split(',');
const connection = await connect({ servers: process.env.NATS_SERVERS });
const consumer = await jetstream(connection).consumers.get(process.env.STREAM); // an ordered consumer
const messages = await consumer.consume();
console.log(JSON.stringify({ consuming: process.env.STREAM }));
for await (const message of messages) {
  const headers = Object.fromEntries([...message.headers].map(([name, values]) => [name, values[0]]));
  try {
    const event = await verifyWebhook(message.data, headers, secrets);
    console.log(JSON.stringify({ verified: event.type, id: event.id }));
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.log(JSON.stringify({ refused: error.message }));
  }
}
