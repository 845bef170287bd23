// What every benchmark shares: a fresh database, child processes, alternating rounds, and the report.
// Each benchmark measures its baseline in the same run, alternating baseline and subject round by round
// after a warm-up, and reports the median of the per-round ratios with min and max.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openEmbeddedCluster } from '../src/db/embedded.ts';
import { createDatabase } from '../support/database.ts';
import { type Child, LISTENING, spawnNode as spawnChild } from '../support/process.ts';

export const ROOT = new URL('..', import.meta.url).pathname;
export const BIN = path.join(ROOT, 'bin/platform.js');
export const ENCRYPTION_KEY = randomBytes(32).toString('base64');

export interface Measure {
  /** operations per second */
  rate: number;
  p50?: number;
  p99?: number;
  errors: number;
  total: number;
}

export interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

export interface Figure {
  name: string;
  /** median of per-round ratios subject/baseline, with min and max */
  ratio?: { median: number; min: number; max: number };
  target?: string;
  met?: boolean;
  subject?: Record<string, number>;
  baseline?: Record<string, number>;
  notes?: string;
}

export interface BenchResult {
  name: string;
  figures: Figure[];
  checks: Check[];
  errors: { failed: number; total: number };
}

/** A fresh database for the run: a new database on DATABASE_URL's server, or a new embedded cluster. */
export async function benchDatabase(): Promise<{ url: string; embedded: boolean; close(): Promise<void> }> {
  const server = process.env.DATABASE_URL;
  if (server) {
    const { url, drop } = await createDatabase(server, 'bench');
    return { url, embedded: false, close: drop };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'pcb-'));
  const cluster = await openEmbeddedCluster(dir, () => {});
  return {
    url: cluster.url,
    embedded: true,
    async close() {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `node script args` with the pinned Node, the given environment added to this one's. */
export const spawnNode = (
  script: string,
  args: string[],
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
): Child => spawnChild(script, args, { ...process.env, ...env }, nodeFlags);

/** The environment every platform process of a benchmark runs with. */
export function platformEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    PLATFORM_ENCRYPTION_KEY: ENCRYPTION_KEY,
    PLATFORM_LOG_LEVEL: 'warn',
    // Limits on, as in a deployment, so every request pays their checks; set far above the load, so none
    // refuses it (the defaults would: 100 requests a second per key).
    PLATFORM_RATE_LIMIT_PER_SECOND: '1000000',
    PLATFORM_RATE_LIMIT_BURST: '1000000',
    PLATFORM_DAILY_LIMITS: 'core/api_requests=1000000000000,core/events_published=1000000000000',
    PORT: '0',
    ...extra,
  };
}

/** Node's flags for a process a benchmark measures: BENCH_CPU_PROF=dir writes a V8 CPU profile of each. */
function profiled(): string[] {
  const profile = globalThis.process.env.BENCH_CPU_PROF;
  return profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
}

/** A bare server of bench/baselines, started with `args`: its address, its pid, and its stop. */
export async function startBaseline(script: string, args: string[]) {
  const server = spawnNode(path.join(ROOT, 'bench/baselines', script), args, {}, profiled());
  const url = await server.waitFor(/listening on (http:\/\/\S+)/);
  return { url, pid: server.child.pid as number, stop: () => server.stop() };
}

export async function startPlatform(command: 'start' | 'serve' | 'worker', env: Record<string, string>) {
  // As `npm start` and `npx platform` run it.
  const process = spawnNode(BIN, [command], env, profiled());
  const baseUrl = command === 'worker' ? '' : await process.waitFor(LISTENING);
  if (command === 'worker') await process.waitFor(/delivery worker \S+ running/);
  return { ...process, baseUrl };
}

/**
 * Runs a load script in its own process, its configuration in a temporary JSON file (it can hold
 * thousands of keys); the script prints one JSON line of results last.
 */
export async function runLoad<T>(script: string, config: unknown): Promise<T> {
  const file = path.join(tmpdir(), `bench-load-${randomBytes(6).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify(config));
  const load = spawnNode(path.join(ROOT, 'bench/load', script), [file]);
  await new Promise<void>((resolve) => load.child.once('exit', () => resolve()));
  rmSync(file, { force: true });
  const lines = load.output().trim().split('\n');
  try {
    return JSON.parse(lines.at(-1) ?? '') as T;
  } catch {
    throw new Error(`${script} printed no result:\n${load.output().slice(-2000)}`);
  }
}

/** Warm-up once each, then `rounds` rounds alternating which goes first. */
export async function alternate<M = Measure>(
  rounds: number,
  baseline: () => Promise<M>,
  subject: () => Promise<M>,
) {
  await baseline();
  await subject();
  const results: { baseline: M; subject: M }[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      const b = await baseline();
      results.push({ baseline: b, subject: await subject() });
    } else {
      const s = await subject();
      results.push({ baseline: await baseline(), subject: s });
    }
  }
  return results;
}

export function spread(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { median, min: sorted[0] ?? 0, max: sorted.at(-1) ?? 0 };
}

export const median = (values: number[]) => spread(values).median;

/** A figure from alternated rounds: ratio of rates, and the medians of the absolute figures. */
export function ratioFigure(
  name: string,
  rounds: { baseline: Measure; subject: Measure }[],
  target?: number,
): Figure {
  const ratio = spread(rounds.map((r) => r.subject.rate / r.baseline.rate));
  const absolute = (pick: (m: Measure) => number | undefined, which: 'baseline' | 'subject') =>
    median(rounds.map((r) => pick(r[which]) ?? 0));
  const side = (which: 'baseline' | 'subject') => ({
    rate: Math.round(absolute((m) => m.rate, which)),
    ...(rounds[0]?.[which].p99 !== undefined
      ? { p50: absolute((m) => m.p50, which), p99: absolute((m) => m.p99, which) }
      : {}),
  });
  return {
    name,
    ratio,
    target: target === undefined ? undefined : `≥ ${target}`,
    met: target === undefined ? undefined : ratio.median >= target,
    subject: side('subject'),
    baseline: side('baseline'),
  };
}

/**
 * A ratio figure with, beside each side's rates, the medians of its rounds' figures that `beside` picks
 * (CPU per event, say), rounded: { serveCpuUs: (r) => r.serve } puts serveCpuUs on both sides.
 */
export function ratioFigureWith<M extends Measure>(
  name: string,
  rounds: { baseline: M; subject: M }[],
  beside: Record<string, (m: NoInfer<M>) => number>,
  options: { target?: number; notes?: string } = {},
): Figure {
  const figure = ratioFigure(name, rounds, options.target);
  const medians = (which: 'baseline' | 'subject') =>
    Object.fromEntries(
      Object.entries(beside).map(([key, pick]) => [
        key,
        Math.round(median(rounds.map((r) => pick(r[which])))),
      ]),
    );
  return {
    ...figure,
    subject: { ...figure.subject, ...medians('subject') },
    baseline: { ...figure.baseline, ...medians('baseline') },
    notes: options.notes,
  };
}

export function errorsOf(rounds: { baseline: Measure; subject: Measure }[]) {
  return rounds.reduce(
    (sum, r) => ({
      failed: sum.failed + r.subject.errors + r.baseline.errors,
      total: sum.total + r.subject.total + r.baseline.total,
    }),
    { failed: 0, total: 0 },
  );
}

export async function environment(databaseUrl: string) {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const { rows } = await client.query(
    `select name, setting from pg_settings
      where name in ('server_version', 'shared_buffers', 'max_connections', 'synchronous_commit', 'fsync', 'wal_level', 'work_mem')`,
  );
  await client.end();
  const pkg = (name: string) =>
    JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  return {
    date: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    node: process.version,
    fastify: pkg('fastify'),
    pg: pkg('pg'),
    undici: pkg('undici'),
    autocannon: pkg('autocannon'),
    postgres: Object.fromEntries(rows.map((r) => [r.name, r.setting])),
  };
}

export function writeResults(all: unknown) {
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  return file;
}
