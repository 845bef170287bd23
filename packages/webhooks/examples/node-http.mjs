// A receiver on Node's own http server (ESM): the raw body is the request stream, read whole.
// Run: WEBHOOK_SECRETS=whsec_… PORT=3000 node node-http.mjs
import { createServer } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@platform-core/webhooks';

const secrets = process.env.WEBHOOK_SECRETS.split(','); // the active one, and the previous one while rotating

const server = createServer(async (request, response) => {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  try {
    const event = await verifyWebhook(Buffer.concat(chunks), request.headers, secrets);
    console.log(JSON.stringify({ verified: event.type, id: event.id }));
    response.writeHead(204).end();
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    console.log(JSON.stringify({ refused: error.message }));
    response.writeHead(400).end();
  }
});
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () =>
  console.log(JSON.stringify({ listening: server.address().port })),
);
