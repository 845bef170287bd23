// CPU time of the processes a benchmark compares, read from /proc (Linux): a process by its id, the whole
// PostgreSQL server (its postmaster, what it has reaped of exited backends, and its live children), and
// the machine's Redis. Microseconds, at the kernel's tick (10 ms): fine over rounds of seconds.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

const TICK_US = 10_000; // USER_HZ is 100 on Linux

/** [ppid, utime + stime, cutime + cstime] of a process, in µs; undefined once it is gone. */
function stat(pid: number): [number, number, number] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (2nd field) may hold spaces: the fields after its closing parenthesis are fixed.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const n = (i: number) => Number(fields[i - 3]) * TICK_US;
    return [Number(fields[1]), n(14) + n(15), n(16) + n(17)];
  } catch {
    return undefined;
  }
}

export const processCpu = (pid: number): number => stat(pid)?.[1] ?? 0;

/** A reader of the PostgreSQL server's CPU, found through a backend of `databaseUrl` (on this machine). */
export async function postgresCpu(databaseUrl: string): Promise<() => number> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const postmaster = stat(rows[0]?.pid ?? 0)?.[0]; // read while the backend lives
  await client.end();
  if (!postmaster) throw new Error('the PostgreSQL server is not on this machine: its CPU cannot be read');
  return () => {
    const [, own = 0, reaped = 0] = stat(postmaster) ?? [];
    let children = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const s = stat(Number(entry));
      if (s?.[0] === postmaster) children += s[1];
    }
    return own + reaped + children;
  };
}

/** The CPU of the machine's redis-server (the first found), or 0 when none runs. */
export function redisCpu(): () => number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'redis-server') {
        const pid = Number(entry);
        return () => processCpu(pid);
      }
    } catch {}
  }
  return () => 0;
}

/**
 * The machine's CPU time so far, all of it and the idle part (idle and waiting for I/O), from /proc/stat,
 * in ticks: over a round, the idle share says whether a system kept the cores busy or waited.
 */
export function machineCpu(): { idle: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.slice(0, 8).reduce((sum, n) => sum + n, 0); // guest time is counted in user already
  return { idle: (fields[3] ?? 0) + (fields[4] ?? 0), total };
}
