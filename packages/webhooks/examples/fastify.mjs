// Fastify (ESM): in the webhook route's own plugin, JSON is parsed as a Buffer, so the handler gets the
// raw body; the rest of the application keeps Fastify's JSON parser.
// Run: WEBHOOK_SECRETS=whsec_… PORT=3000 node fastify.mjs
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';
import Fastify from 'fastify';

const secrets = process.env.WEBHOOK_SECRETS.split(',');
const app = Fastify();

await app.register(async (webhooks) => {
  webhooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );
  webhooks.post('/webhooks', async (request, reply) => {
    try {
      const event = await verifyWebhook(request.body, request.headers, secrets);
      console.log(JSON.stringify({ verified: event.type, id: event.id }));
      return reply.code(204).send();
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      console.log(JSON.stringify({ refused: error.message }));
      return reply.code(400).send();
    }
  });
});

await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(JSON.stringify({ listening: app.server.address().port }));
