// What Pay declares to the platform: the scopes a project's key needs to charge and to read payments, the
// metrics (payments, counted by the gateway after each charge that succeeds, and their amount, recorded
// by Pay), the events it publishes for a project, the processor behind its breaker, that it anonymizes
// when pushed, and the routes the gateway serves at /pay/v1/….
const payment = {
  type: 'object',
  properties: {
    paymentId: { type: 'string', format: 'uuid' },
    amount: { type: 'integer', minimum: 1 },
    currency: { type: 'string', pattern: '^[a-z]{3}$' },
    reason: { type: 'string' },
  },
  required: ['paymentId', 'amount', 'currency'],
};

export const MANIFEST = {
  description: 'Card payments through a processor, each charge made once however often it is retried.',
  scopes: [
    { name: 'pay:charge', description: 'Charge a card' },
    { name: 'pay:read', description: 'Read payments back' },
  ],
  metrics: [
    { name: 'payments', description: 'Charges that succeeded', unit: 'payment', defaultDailyLimit: 10_000 },
    {
      name: 'amount_minor',
      description: 'What was charged, in minor units of its currency',
      unit: 'minor unit',
    },
  ],
  eventTypes: [
    {
      name: 'pay.payment.succeeded',
      description: 'A card was charged.',
      schema: payment,
      example: { paymentId: '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6', amount: 4200, currency: 'eur' },
    },
    {
      name: 'pay.payment.failed',
      description: 'A charge was declined by the processor.',
      schema: payment,
      example: {
        paymentId: '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f7',
        amount: 4200,
        currency: 'eur',
        reason: 'card_declined',
      },
    },
    {
      name: 'pay.payment.settled',
      description: 'The processor settled a charge (it said so by its own webhook).',
      schema: payment,
      example: { paymentId: '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6', amount: 4200, currency: 'eur' },
    },
  ],
  providers: [{ name: 'processor', description: 'The card processor’s API' }],
  erasure: { mode: 'push' as const, timeoutSeconds: 5 },
  gateway: {
    routes: [
      {
        method: 'POST' as const,
        path: '/v1/payments',
        scope: 'pay:charge',
        idempotent: true,
        metric: 'payments',
      },
      { method: 'GET' as const, path: '/v1/payments/{id}', scope: 'pay:read', idempotent: false },
    ],
  },
};
