// Debian's Prometheus, run for a test: a temporary configuration and data directory, loopback only,
// scraping the given targets every second with the repository's rules loaded; queried over its HTTP API.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { freePort, spawnProgram } from '../../support/process.ts';

export const RULES = new URL('../../ops/prometheus/rules.yml', import.meta.url).pathname;

export interface Prometheus {
  url: string;
  /** An instant query's result vector. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  get(path: string): Promise<any>;
}

export async function startPrometheus(targets: string[]): Promise<Prometheus> {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-prometheus-'));
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES],
      scrape_configs: [{ job_name: 'platform-core', static_configs: [{ targets }] }],
    }),
  );
  const port = await freePort();
  const prometheus = spawnProgram(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { PATH: process.env.PATH },
  );
  after(async () => {
    await prometheus.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  await prometheus.waitFor(/Server is ready to receive web requests/, 30_000);
  const url = `http://127.0.0.1:${port}`;
  const get = async (apiPath: string) => {
    const response = await fetch(`${url}${apiPath}`);
    const body = (await response.json()) as { status: string; data: any; error?: string };
    if (body.status !== 'success') throw new Error(`${apiPath}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    get,
    query: async (expr) => (await get(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
  };
}
