// Express (CommonJS): express.raw on the webhook route keeps the body as a Buffer; express.json() there
// would parse it, and a body parsed and serialised again is not the body that was signed.
// Run: WEBHOOK_SECRETS=whsec_… PORT=3000 node express.cjs
const express = require('express');
const { verifyWebhook, WebhookVerificationError } = require('@platform-core/webhooks');

const secrets = process.env.WEBHOOK_SECRETS.split(',');
const app = express();

app.post('/webhooks', express.raw({ type: 'application/json' }), async (request, response, next) => {
  try {
    const event = await verifyWebhook(request.body, request.headers, secrets);
    console.log(JSON.stringify({ verified: event.type, id: event.id }));
    response.sendStatus(204);
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) return next(error);
    console.log(JSON.stringify({ refused: error.message }));
    response.sendStatus(400);
  }
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () =>
  console.log(JSON.stringify({ listening: server.address().port })),
);
