// A consumer of a RabbitMQ destination (amqplib): each message's body is the webhook payload, and its
// AMQP headers carry webhook-id, webhook-timestamp and webhook-signature; verified as a webhook.
// Run: WEBHOOK_SECRETS=whsec_… AMQP_URL=amqp://guest:guest@localhost QUEUE=events node rabbitmq.mjs
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';
import { connect } from 'amqplib';

const secrets = process.env.WEBHOOK_SECRETS.split(',');
const connection = await connect(process.env.AMQP_URL);
const channel = await connection.createChannel();
await channel.consume(process.env.QUEUE, async (message) => {
  try {
    const event = await verifyWebhook(message.content, message.properties.headers, secrets);
    console.log(JSON.stringify({ verified: event.type, id: event.id }));
    channel.ack(message);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.log(JSON.stringify({ refused: error.message }));
    channel.reject(message, false); // not from the service: dropped (or dead-lettered), never re-read
  }
});
console.log(JSON.stringify({ consuming: process.env.QUEUE }));
