// Reading a Prometheus exposition: a scrape of a metrics listener, and one sample's value by name and labels;
// and a test service's own counters.
import { execFileSync } from 'node:child_process';
import type { Context } from '../../src/context.ts';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export async function scrape(address: string): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(`${address}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  const text = await response.text();
  return { text, samples: parseExposition(text) };
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample of this name whose labels include these; undefined when there is none. */
export function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** promtool (Debian's prometheus package), or a clear failure saying how to get it. */
export function promtool(args: string[], input?: string): string {
  try {
    return execFileSync('promtool', args, { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    const failure = error as { code?: string; stdout?: string; stderr?: string };
    if (failure.code === 'ENOENT') throw new Error('promtool is missing: apt-get install -y prometheus');
    throw new Error(`promtool ${args.join(' ')} failed:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
  }
}

/** How many sole writes a test service committed and missed so far (idempotency/sole.ts). */
export async function soleWritesOf(service: { context: Context }) {
  const { values } = await service.context.metrics.soleWrites.get();
  const of = (result: string) => values.find((v) => v.labels.result === result)?.value ?? 0;
  return { committed: of('committed'), missed: of('missed') };
}
