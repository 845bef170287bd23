// Hono (ESM), here on Node through @hono/node-server; the handler is the same on Deno, Bun or Workers.
// The raw body is c.req.text(), read before anything parses it.
// Run: WEBHOOK_SECRETS=whsec_… PORT=3000 node hono.mjs
import { serve } from '@hono/node-server';
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';
import { Hono } from 'hono';

const secrets = process.env.WEBHOOK_SECRETS.split(',');
const app = new Hono();

app.post('/webhooks', async (c) => {
  try {
    const event = await verifyWebhook(await c.req.text(), c.req.raw.headers, secrets);
    console.log(JSON.stringify({ verified: event.type, id: event.id }));
    return c.body(null, 204);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.log(JSON.stringify({ refused: error.message }));
    return c.body(null, 400);
  }
});

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) =>
  console.log(JSON.stringify({ listening: info.port })),
);
