// Sends again, to one endpoint, every event whose delivery died since a time: first counted (a dry run),
// then done as a job whose progress is polled.
//   node src/recover.ts ENDPOINT_ID SINCE            e.g. 2026-11-26T00:00:00Z
import { args, platform } from './platform.ts';

const [endpointId = '', since = ''] = args('recover.ts ENDPOINT_ID SINCE', 2);
const dryRun = await platform.webhookEndpoints.recover(endpointId, { states: ['dead'], since, dryRun: true });
console.log(`${dryRun.matched} event(s) to send again`);
if (dryRun.matched > 0) {
  const { jobId } = await platform.webhookEndpoints.recover(endpointId, { states: ['dead'], since });
  for (;;) {
    const job = await platform.jobs.get(jobId ?? '');
    console.log(`job ${job.id}: ${job.state}, ${job.done} of ${job.total}`);
    if (job.state === 'done' || job.state === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
