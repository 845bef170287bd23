// The one stateful part. A Database wraps a pg pool; services take a `Db` (anything with `query`),
// so the same service function runs on the pool or inside a transaction's client.
import pg from 'pg';
import { DEFAULT_POOL_SIZE } from '../lib/defaults.ts';
import { groupCommit } from './group-commit.ts';

export interface Db {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /**
   * A named statement ({ name, text, values }): prepared once per connection, then only bound and
   * executed, so PostgreSQL stops parsing and planning it on every call. Hot statements use it.
   */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/**
 * A transaction's whole write as one statement whose answer is known before it runs: `ctes` are its
 * data-modifying CTEs (`a as (insert …), b as (…)`, with parameters `$1…` of `values`), and `check` a
 * condition on them that holds when the write took place as predicted (one row inserted, as many
 * deliveries as predicted). `notify` is a notification sent once it commits. A statement with a `name` is
 * planned once per connection.
 */
export interface SoleWrite {
  name?: string;
  ctes: string;
  check: string;
  values: unknown[];
  notify?: { channel: string; payload: string };
  /**
   * It may commit in one transaction with others (group-commit.ts): it only inserts and reads, or also
   * updates the one row that `locks` names.
   */
  together?: { locks?: string };
}

/** What to do as a transaction ends: with its commit, after it, or if it does not commit. */
export interface TransactionHooks {
  /** A write whose result nobody reads (an audit entry), sent with the commit: no round trip of its own. */
  beforeCommit(statement: pg.QueryConfig): void;
  onCommit(callback: () => void): void;
  /**
   * Work the answer waits for once the transaction has committed, given a handle on the pool: a setting
   * changed here is bound in every process before the change is answered (settings/lease.ts).
   */
  beforeAnswer(wait: (db: Db) => Promise<void>): void;
  onRollback(callback: () => void): void;
  /**
   * Offers the transaction's whole write as one statement, with the body it answers when it takes place.
   * A transaction that can (an idempotent request's, which records that answer in the same statement;
   * idempotency/sole.ts) runs it with the statements sent with the commit, commits, and says true; false
   * means nothing changed, and the operation goes on statement by statement.
   */
  sole(write: SoleWrite, answer: unknown): Promise<boolean>;
}

export interface Database extends Db {
  pool: pg.Pool;
  /**
   * Runs fn in one transaction, then the hooks' callbacks of the way it ended. `settings` (`set local …`
   * statements) are sent with the transaction's begin, in the same round trip.
   */
  transaction<T>(fn: (tx: Db, hooks: TransactionHooks) => Promise<T>, settings?: string): Promise<T>;
  /**
   * LISTENs on a channel on a connection of its own, reconnecting after a loss; returns a stop function.
   * onNotify gets each notification's payload, and '' after (re)connecting: anything sent meanwhile.
   * `onConnect` runs on that connection each time it connects (a session lock kept while it lives).
   */
  listen(
    channel: string,
    onNotify: (payload: string) => void,
    onConnect?: pg.QueryConfig,
  ): Promise<() => Promise<void>>;
  /**
   * A NOTIFY on a connection of its own, outside any transaction, so that it never waits behind the
   * pool's work (the connection is made on first use, and again after a failure).
   */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Commits one statement: alone, or in one transaction with others offered meanwhile when the database
   * is busy. Only for statements that insert and read, or also update the one row `locks` names
   * (group-commit.ts says why).
   */
  commitTogether(statement: pg.QueryConfig, locks?: string): Promise<void>;
  /** `select 1` within timeoutMs: false when the database cannot be reached in that time. */
  ping(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

// Reading bigint counts as numbers: every count we report is far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openDatabase(url: string, options: { max?: number } = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? DEFAULT_POOL_SIZE,
    // A database that does not answer should fail fast, so callers can answer 503 quickly.
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    application_name: 'platform-core',
    // A transaction left idle (its process hung) is ended by PostgreSQL after 60 s, releasing its locks:
    // the idempotency claim of a dead or stuck process is released within that time.
    idle_in_transaction_session_timeout: 60_000,
    // And a statement whose client died is cancelled within a second instead of running to its end.
    options: '-c client_connection_check_interval=1000',
  });
  // An idle client whose server went away emits here; the pool drops it and the next query reconnects.
  pool.on('error', () => {});
  // A client in use whose connection breaks (a restart, a cut) emits 'error' too, besides failing its
  // query: without a listener that event would end the process. The failed query answers the request.
  pool.on('connect', (client) => client.on('error', () => {}));
  const notifier = ownConnection(url, 'platform-core notifier');
  const onPool: Db = {
    query: ((statement: string | pg.QueryConfig, values?: unknown[]) =>
      typeof statement === 'string' ? pool.query(statement, values) : pool.query(statement)) as Db['query'],
  };

  return {
    pool,
    query: onPool.query,
    async transaction(fn, settings) {
      const client = await pool.connect();
      const statements: pg.QueryConfig[] = [];
      const committed: (() => void)[] = [];
      const beforeAnswer: ((db: Db) => Promise<void>)[] = [];
      const rolledBack: (() => void)[] = [];
      const hooks = {
        beforeCommit: (statement: pg.QueryConfig) => statements.push(statement),
        onCommit: (c: () => void) => committed.push(c),
        beforeAnswer: (wait: (db: Db) => Promise<void>) => beforeAnswer.push(wait),
        onRollback: (c: () => void) => rolledBack.push(c),
        sole: async () => false, // nothing to record: the statements of the ordinary way cost no more
      };
      let broken = false; // a connection that cannot even roll back is not given back to the pool
      try {
        await client.query(settings ? `begin; ${settings}` : 'begin');
        const result = await fn(client, hooks);
        for (const statement of statements) await client.query(statement);
        await client.query('commit').catch((error) => {
          // It may have committed: what was taken for it is not given back (see the pipeline's outcomeUnknown).
          if (isUnavailable(error)) rolledBack.length = 0;
          throw error;
        });
        for (const callback of committed) callback();
        for (const wait of beforeAnswer) await wait(onPool);
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {
          broken = true;
        });
        for (const callback of rolledBack) callback();
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async ping(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const query = pool.query('select 1').then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([query, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    listen: (channel, onNotify, onConnect) => listen(url, channel, onNotify, onConnect),
    commitTogether: groupCommit(pool),
    // Named, so that it is parsed and planned once per connection, not at each of its many sends.
    notify: (channel, payload) =>
      notifier.query({ name: 'pg-notify', text: 'select pg_notify($1, $2)', values: [channel, payload] }),
    async close() {
      await notifier.end();
      await pool.end();
    },
  };
}

/** A connection of its own, made on first use and again after a failure; each query bounded in time. */
function ownConnection(url: string, name: string) {
  let client: Promise<pg.Client> | undefined;
  let closed = false;
  const connect = async () => {
    if (closed) throw new Error(`${name}: the database is closed`);
    const next = new pg.Client({
      connectionString: url,
      application_name: name,
      connectionTimeoutMillis: 3000,
      query_timeout: 3000,
    });
    next.on('error', () => {}); // a broken connection fails its next query, which drops it
    await next.connect();
    return next;
  };
  const drop = (dropped: Promise<pg.Client>) => {
    if (client === dropped) client = undefined;
    return dropped.then(endWithin, () => {});
  };
  return {
    async query(config: pg.QueryConfig): Promise<void> {
      client ??= connect();
      const current = client;
      try {
        await (await current).query(config);
      } catch (error) {
        void drop(current);
        throw error;
      }
    },
    end() {
      closed = true;
      return client ? drop(client) : Promise.resolve();
    },
  };
}

const RELISTEN_MS = 1000;

async function listen(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  onConnect?: pg.QueryConfig,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const next = new pg.Client({ connectionString: url, application_name: 'platform-core listener' });
    next.on('notification', (message) => onNotify(message.payload ?? ''));
    const lost = () => {
      if (client !== next) return;
      client = undefined;
      void endWithin(next);
      if (!closed) retry = setTimeout(() => void connect().catch(() => {}), RELISTEN_MS);
    };
    next.on('error', lost);
    next.on('end', lost);
    try {
      await next.connect();
      await next.query(`listen ${channel}`);
      if (onConnect) await next.query(onConnect);
      client = next;
      onNotify(''); // anything sent while we were not listening is found by this wake-up
    } catch {
      void endWithin(next);
      if (!closed) retry = setTimeout(() => void connect().catch(() => {}), RELISTEN_MS);
    }
  };
  await connect();
  return async () => {
    closed = true;
    clearTimeout(retry);
    if (client) await endWithin(client);
  };
}

/** client.end(), bounded: on a connection the server already dropped, end() may never settle. */
function endWithin(client: pg.Client, ms = 1000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    client.end().then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

/** A timestamp column read as the API writes times (ISO 8601, UTC, microseconds), under its own name. */
export const isoColumn = (column: string) =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ${column}`;

/** The one row a statement must return (an insert's `returning`, an aggregate). */
export function onlyRow<R extends pg.QueryResultRow>(result: pg.QueryResult<R>): R {
  const row = result.rows[0];
  if (!row) throw new Error('expected one row, got none');
  return row;
}

/** The code of an error from PostgreSQL (its SQLSTATE) or from Node (ECONNREFUSED…), if it has one. */
export function pgCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Errors that mean "the database cannot be reached", as opposed to a bad query: the error itself, or what
 * it wraps (its `cause`, or each of an AggregateError's `errors`: a connect that tried every address).
 */
export function isUnavailable(error: unknown, depth = 0): boolean {
  if (isUnavailableItself(error)) return true;
  if (depth > 3 || typeof error !== 'object' || error === null) return false;
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (cause !== undefined && isUnavailable(cause, depth + 1)) return true;
  return Array.isArray(errors) && errors.some((inner) => isUnavailable(inner, depth + 1));
}

function isUnavailableItself(error: unknown): boolean {
  const code = pgCode(error);
  if (code !== undefined) {
    // node networking errors; PostgreSQL's connection exception and operator intervention classes (a
    // restart, a shutdown), and too many connections (53300)
    if (
      ['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH'].includes(
        code,
      )
    )
      return true;
    if (code.startsWith('08') || code.startsWith('57P') || code === '53300') return true;
  }
  const e = error as { message?: string } | undefined;
  // pg's own: a pool that cannot connect in time, a connection cut, a client used after its connection broke
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|is not queryable/i.test(
    e?.message ?? '',
  );
}
