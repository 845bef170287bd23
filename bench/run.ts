// npm run bench [-- NAME …]: runs the suite (or the named benchmarks) on the embedded PostgreSQL, or on
// DATABASE_URL's server, prints each figure with its baseline and target, and writes the results as JSON
// to bench/results/. Fails when more than 0.1 % of requests failed or a correctness check failed.
import { api } from './api.ts';
import { capability } from './capability.ts';
import { catalogue } from './catalogue.ts';
import { fairness, orderedDelivery } from './control.ts';
import { deliveryThroughput, isolation } from './delivery.ts';
import { destinations } from './destinations.ts';
import { growth } from './growth.ts';
import { idempotentWrite } from './idempotent-write.ts';
import { deliveryLatency } from './latency.ts';
import { type BenchResult, benchDatabase, environment, writeResults } from './lib.ts';
import { metrics } from './metrics.ts';
import { peers } from './peers.ts';
import { publish } from './publish.ts';
import { queueModels } from './queue-models.ts';
import { receivers } from './receivers.ts';
import { scale } from './scale.ts';
import { sender } from './sender.ts';
import { startup } from './startup.ts';
import { usageGrowth } from './usage-growth.ts';

const SUITE: Record<string, (url: string, embedded: boolean) => Promise<BenchResult>> = {
  api,
  'idempotent-write': idempotentWrite,
  catalogue,
  capability,
  'delivery-throughput': deliveryThroughput,
  'delivery-latency': deliveryLatency,
  destinations,
  isolation,
  'ordered-delivery': orderedDelivery,
  fairness,
  metrics,
  startup,
  growth,
  peers,
  publish,
  'queue-models': queueModels,
  receivers,
  scale,
  sender,
  'usage-growth': usageGrowth,
};

const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(SUITE);
const unknown = names.filter((n) => !(n in SUITE));
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(', ')}; there are ${Object.keys(SUITE).join(', ')}`);
  process.exit(2);
}

const results: BenchResult[] = [];
let env: Awaited<ReturnType<typeof environment>> | undefined;
for (const name of names) {
  // A fresh database for each benchmark, so none measures another's leftovers.
  const database = await benchDatabase();
  try {
    env ??= await environment(database.url);
    if (results.length === 0) console.log(JSON.stringify(env, null, 2));
    console.log(`\n== ${name}`);
    const result = await (SUITE[name] as (url: string, embedded: boolean) => Promise<BenchResult>)(
      database.url,
      database.embedded,
    );
    results.push(result);
    print(result);
  } finally {
    await database.close();
  }
}

const file = writeResults({ environment: env, results });
console.log(`\nresults written to ${file}`);
const failures = results.flatMap((r) => [
  ...r.checks.filter((c) => !c.ok).map((c) => `${r.name}: check failed: ${c.name} (${c.detail ?? ''})`),
  ...(r.errors.total > 0 && r.errors.failed / r.errors.total > 0.001
    ? [`${r.name}: ${r.errors.failed} of ${r.errors.total} requests failed (over 0.1 %)`]
    : []),
]);
for (const failure of failures) console.error(failure);
process.exit(failures.length ? 1 : 0);

function print(result: BenchResult) {
  for (const figure of result.figures) {
    const ratio = figure.ratio
      ? `ratio ${figure.ratio.median.toFixed(2)} (min ${figure.ratio.min.toFixed(2)}, max ${figure.ratio.max.toFixed(2)})`
      : '';
    const verdict =
      figure.met === undefined ? '' : figure.met ? `met ${figure.target}` : `MISSED ${figure.target}`;
    console.log(`  ${figure.name}\n    ${[ratio, verdict].filter(Boolean).join('  ')}`);
    if (figure.subject) console.log(`    subject  ${JSON.stringify(figure.subject)}`);
    if (figure.baseline) console.log(`    baseline ${JSON.stringify(figure.baseline)}`);
    if (figure.notes) console.log(`    ${figure.notes}`);
  }
  for (const check of result.checks)
    console.log(`  check: ${check.ok ? 'ok' : 'FAILED'} ${check.name} ${check.detail ?? ''}`);
  console.log(`  errors: ${result.errors.failed} of ${result.errors.total}`);
}
