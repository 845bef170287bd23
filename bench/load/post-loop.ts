// The baseline of delivery throughput: `total` signed POSTs of the same body from one undici client to
// the receiver's URLs (round-robin), `connections` at a time. What a sender with nothing else to do does.

import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  urls: string[];
  total: number;
  connections: number;
  body: string;
};
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
const secret = Buffer.alloc(32, 3);
let next = 0;
let errors = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: config.connections }, async () => {
    for (let i = next++; i < config.total; i = next++) {
      const id = randomUUID();
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', secret)
        .update(`${id}.${timestamp}.${config.body}`)
        .digest('base64');
      try {
        const response = await request(config.urls[i % config.urls.length] as string, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': `v1,${signature}`,
          },
          body: config.body,
        });
        await response.body.dump();
        if (response.statusCode >= 300) errors++;
      } catch {
        errors++;
      }
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
await agent.close();
console.log(JSON.stringify({ rate: config.total / seconds, errors, total: config.total }));
