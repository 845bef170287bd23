// The delivery worker's place in a process: `platform start` runs it beside the API, `platform worker`
// runs it alone. It owns its timers and stops cleanly; the claim-send-record loop over the deliveries
// table arrives with the webhook delivery capability.
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';

export class DeliveryWorker {
  private running = false;
  private readonly log: Logger;

  constructor(_db: Database, log: Logger) {
    this.log = log;
  }

  start(): void {
    this.running = true;
    this.log.info('delivery worker started');
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.log.info('delivery worker stopped');
  }
}
