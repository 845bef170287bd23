// What Notify declares to the platform: the scope a project's key needs to send, the metric the gateway
// counts (and limits daily), the event it publishes, the provider behind its breaker, that it erases when
// pushed, and the routes the gateway serves at /notify/v1/….
export const MANIFEST = {
  description: 'Messages to people, by e-mail, through a provider.',
  scopes: [{ name: 'notify:send', description: 'Send messages and read them back' }],
  metrics: [
    {
      name: 'messages_sent',
      description: 'Messages handed to the provider',
      unit: 'message',
      defaultDailyLimit: 1000,
    },
  ],
  eventTypes: [
    {
      name: 'notify.message.sent',
      description: 'A message was handed to the provider.',
      schema: {
        type: 'object',
        properties: {
          messageId: { type: 'string', format: 'uuid' },
          to: { type: 'string', format: 'email' },
        },
        required: ['messageId', 'to'],
      },
      example: { messageId: '0193b0a4-1e0b-7d4e-9f10-a1b2c3d4e5f6', to: 'ada@example.com' },
    },
  ],
  providers: [{ name: 'mailer', description: 'The e-mail provider’s HTTP API' }],
  erasure: { mode: 'push' as const, timeoutSeconds: 5 },
  gateway: {
    routes: [
      {
        method: 'POST' as const,
        path: '/v1/messages',
        scope: 'notify:send',
        idempotent: true,
        metric: 'messages_sent',
      },
      { method: 'GET' as const, path: '/v1/messages/{id}', scope: 'notify:send', idempotent: false },
    ],
  },
};
