// A consumer of a Redis Streams destination (ioredis, a consumer group): each entry's `payload` field is
// the webhook payload, and its other fields carry webhook-id, webhook-timestamp and webhook-signature.
// Run: WEBHOOK_SECRETS=whsec_… REDIS_URL=redis://localhost:6379 STREAM=events node redis.mjs
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';
import { Redis } from 'ioredis';

const secrets = process.env.WEBHOOK_SECRETS.split(',');
const stream = process.env.STREAM;
const redis = new Redis(process.env.REDIS_URL);
// The group, and the stream with it (the destination sends only to a stream that exists).
await redis.xgroup('CREATE', stream, 'consumers', '0', 'MKSTREAM').catch(() => {}); // BUSYGROUP: made before
console.log(JSON.stringify({ consuming: stream }));
for (;;) {
  const batch = await redis.xreadgroup(
    'GROUP',
    'consumers',
    'one',
    'COUNT',
    100,
    'BLOCK',
    5000,
    'STREAMS',
    stream,
    '>',
  );
  for (const [, entries] of batch ?? []) {
    for (const [id, list] of entries) {
      const fields = {};
      for (let i = 0; i < list.length; i += 2) fields[list[i]] = list[i + 1];
      try {
        const event = await verifyWebhook(fields.payload, fields, secrets);
        console.log(JSON.stringify({ verified: event.type, id: event.id }));
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        console.log(JSON.stringify({ refused: error.message }));
      }
      await redis.xack(stream, 'consumers', id);
    }
  }
}
