// The same receiver in a CommonJS project (npm's default): require finds the package's CommonJS build.
// Run: WEBHOOK_SECRETS=whsec_… PORT=3000 node node-http.cjs
const { createServer } = require('node:http');
const { verifyWebhook, WebhookVerificationError } = require('@platform-core/webhooks');

const secrets = process.env.WEBHOOK_SECRETS.split(',');

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
