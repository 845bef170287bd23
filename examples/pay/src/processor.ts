// A local stand-in for a card processor, started by Pay itself when no PAY_PROCESSOR_URL is given. Its API
// (`POST /charges`) approves a card, or declines one ending in 0002 (as processors' test cards do); a
// moment later it tells Pay the charge settled, by a webhook of its own signed as Standard Webhooks sign
// (its secret: PAY_PROCESSOR_SECRET), which is how real processors report what happens after the answer.
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

/** Standard Webhooks' headers for a payload, signed with a `whsec_` secret (as any processor signs). */
function signed(secret: string, id: string, payload: string) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

export async function startProcessor(options: {
  port: number;
  host: string;
  secret: string;
  /** where the processor sends its webhooks (Pay's /processor/webhooks) */
  webhookUrl: () => string;
}): Promise<{ url: string; close(): void }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk;
    });
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/charges') return response.writeHead(404).end();
      const { card, amount, currency } = JSON.parse(body) as {
        card: string;
        amount: number;
        currency: string;
      };
      const id = `ch_${randomUUID().replaceAll('-', '')}`;
      const declined = card.endsWith('0002');
      response
        .writeHead(declined ? 402 : 201, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            declined ? { id, status: 'declined', reason: 'card_declined' } : { id, status: 'approved' },
          ),
        );
      if (!declined) setTimeout(() => void settled({ id, amount, currency }), 1000);
    });
  });
  /** The processor's own webhook: the charge settled. */
  async function settled(charge: { id: string; amount: number; currency: string }) {
    const payload = JSON.stringify({ type: 'charge.settled', data: charge });
    const headers = signed(options.secret, `evt_${randomUUID()}`, payload);
    await fetch(options.webhookUrl(), {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: payload,
    }).catch((error) => console.error('processor: the settlement webhook failed', error));
  }
  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve));
  return { url: `http://${options.host}:${options.port}`, close: () => server.close() };
}
