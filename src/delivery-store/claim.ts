// The claim: one transaction that takes due deliveries from the queue (`for update skip locked`, so
// workers never wait on each other), decides what becomes of each, and leases the ones to send.
//
//   1. the due deliveries, in due order, with their endpoint's state, address and sealed secrets (the
//      claim's one read of the endpoint), due within LOOKAHEAD (the worker holds one until its time, so
//      that a paced delivery goes at its slot, not at the next claim); of those to send, only each
//      endpoint's share goes on (held.ts), and the rest stay due, unlocked at the commit;
//   2. behind each head of an ordered lane, the run of deliveries that follow it (delivery-store/lanes.ts), leased with it
//      so that one worker sends them one at a time;
//   3. for rate-limited endpoints, their send slots (pacing.ts), under the endpoint row's lock;
//   4. a delivery whose endpoint is gone or disabled is cancelled; one whose endpoint is paused is held;
//   5. the rest are leased (an expired lease is due again: a crashed worker loses nothing) and returned with
//      everything the send needs (event, address, sealed secrets), grouped in runs.
import { type Database, type Db, pgCode } from '../db/database.ts';
import { LANE_LOCK } from './lanes.ts';
import { DECIDED, LEASE, LEASED } from './lease.ts';
import { LOOKAHEAD_S, type Paced, pace } from './pacing.ts';
import { daysOf } from './retention.ts';
import { type DueEndpoint, type Leased, type Run, withBodies } from './run.ts';

/**
 * How many deliveries one claim may lease behind the heads of ordered lanes, shared among them (at least
 * 10 each). A lane moves on between runs only once the last run is recorded and the next claimed (tens of
 * ms), so long runs are what let one lane go at the pace of one request at a time (bench ordered-delivery:
 * 0.85 of it with runs of 500, 0.92 with 1,000).
 */
const RUN_BUDGET = 1000;

/** A due delivery, with its endpoint's state and what its send needs of the endpoint. */
interface Due extends DueEndpoint {
  project_id: string;
  id: string;
  /** where its queue row is: the lease finds it there, without a second lookup by key */
  ctid: string;
  event_created_at: Date;
  endpoint_id: string;
  lane: string | null;
  seq: string;
  throttled: boolean;
  held: string | null;
  lease_until: Date | null;
  due_at: number;
  found: boolean;
  active: boolean | null;
  paused: boolean | null;
  rate: number | null;
  now: number;
  head_id?: string;
}

/** A delivery leased to be sent at `at`, or pushed to its slot `at` (epoch seconds). */
type Action = { due: Due; action: 'claim' | 'push'; at: number };

/**
 * The claim transaction's settings, sent with its begin. Its commit does not wait for its WAL (below, in
 * claim). And the due rows are read by walking the due index in order, never by a bitmap of every due
 * row sorted: with statistics taken while the queue was small (autovacuum analyzes it at its own time),
 * the planner counted a backlog of thousands as a few rows and chose the bitmap, which reads the whole
 * backlog at each claim (test/statistics.test.ts). And its named statements keep the plan made for any
 * values: left to choose, PostgreSQL found a plan for the known limit cheaper every time and planned the
 * due rows' query at every claim, which slowed every delivery (docs/decisions/measured-choices.md).
 * Nor is any table of the claim read whole: each row it writes is one it found, by its ctid or its key.
 * A plan kept from a small queue read the queue whole to find the rows by ctid, cheaper there than a TID
 * scan, and kept doing so as a backlog came, until autovacuum analyzed the queue: a claim then
 * cost its backend many times more (docs/decisions/plans-on-a-small-queue.md).
 */
export const CLAIM_SETTINGS =
  'set local synchronous_commit = off; set local enable_bitmapscan = off; set local enable_seqscan = off; set local plan_cache_mode = force_generic_plan';

/** What a claim leased, and what it saw of the queue. */
interface Claimed {
  runs: Run[];
  /** how many it found due: its limit means more may be */
  due: number;
  /** the endpoints it found more of than their share */
  unfinished: string[];
  /** how many it pushed to their rate's slots, and the first of those slots (epoch ms) */
  pushed: number;
  nextSlot: number | null;
  /** the database's clock as the claim began (epoch ms) */
  claimedAt: number;
}

/**
 * Claims up to `limit` due deliveries, none of `leftOut`'s, and leases at most `share(endpoint)` of one
 * endpoint's.
 */
export async function claim(
  db: Database,
  options: {
    limit: number;
    share: (endpointId: string) => number;
    leaseSeconds: number;
    token: string;
    holder: number;
    leftOut: string[];
  },
): Promise<Claimed> {
  // The claim's commit does not wait for its WAL to reach the disk (the server's fsync and synchronous
  // commit stay on for every other write). All it writes can be lost in a crash without losing a
  // delivery: a lease (the delivery is due again, and sent again, as after any crash mid-send), and
  // what the next claim would decide again (a cancel, a hold, a push to a slot). The first write that
  // waits for its flush flushes this one too (docs/decisions/claim-commit.md: publish→receipt's p50
  // fell by a third). The settings go with the transaction's begin (one round trip less a claim).
  return db.transaction(async (tx) => {
    const due = await dueDeliveries(tx, options.limit, options.leftOut);
    if (due.length === 0)
      return { runs: [], due: 0, unfinished: [], pushed: 0, nextSlot: null, claimedAt: 0 };
    const now = due[0]?.now as number;
    const cancel = due.filter((d) => !d.found || !d.active);
    const paused = due.filter((d) => d.found && d.active && d.paused);
    const { heads, unfinished } = shares(
      due.filter((d) => d.found && d.active && !d.paused),
      options.share,
    );
    const runs = await runsBehind(tx, heads);
    const actions = await paceRuns(tx, runs, now);
    if (paused.length > 0) await holdPaused(tx, paused);
    const claimed = await apply(tx, actions, cancel, options);
    const byId = new Map(claimed.map((c) => [c.id, c]));
    const leased = runs
      .map((run) => run.flatMap((d) => byId.get(d.id) ?? []))
      .filter((deliveries) => deliveries.length > 0)
      .map((deliveries) => ({
        endpointId: deliveries[0]?.endpoint_id as string,
        deliveries,
        claimedAt: now * 1000,
      }));
    const pushed = actions.actions.filter((a) => a.action === 'push').map((a) => a.at);
    const nextSlot = pushed.length > 0 ? Math.min(...pushed) * 1000 : null;
    return {
      runs: leased,
      due: due.length,
      unfinished,
      pushed: pushed.length,
      nextSlot,
      claimedAt: now * 1000,
    };
  }, CLAIM_SETTINGS);
}

/**
 * The due deliveries in due order, with their endpoint's state and what a send to it needs; $1 the
 * limit, $2 endpoints left out, $3 the lookahead in seconds. The queue rows are picked and locked first,
 * walking the due index in order up to the limit (bitmap scans are off in the claim: CLAIM_SETTINGS),
 * and only they are joined to their endpoints: with the join inside, the planner priced the walk with a
 * probe of the endpoints per row and chose to read every due row, join and sort them
 * (docs/decisions/plans-on-a-small-day.md).
 */
export const DUE_QUERY = `select q.project_id, q.delivery_id as id, q.ctid, q.event_created_at, q.endpoint_id, q.lane, q.seq,
                  q.throttled, q.held, q.lease_until, extract(epoch from q.next_attempt_at)::float8 as due_at,
                  w.id is not null as found, w.active, w.paused, w.rate_limit_per_second as rate,
                  w.url, w.active_secret, w.previous_secret, w.headers_sealed,
                  w.auth, w.auth_secret_sealed, w.tls_certificate, w.tls_key_sealed,
                  w.destination_type, w.target, w.target_secret_sealed, extract(epoch from now())::float8 as now
             from (select ctid, * from delivery_queue
                    where held is null and next_attempt_at <= now() + make_interval(secs => $3)
                      and (lease_until is null or lease_until < now())
                      and endpoint_id <> all ($2::uuid[])
                    order by next_attempt_at
                    limit $1
                      for update skip locked) q
             left join webhook_endpoints w on w.project_id = q.project_id and w.id = q.endpoint_id
            order by q.next_attempt_at`;

async function dueDeliveries(tx: Db, limit: number, leftOut: string[]) {
  const { rows } = await tx.query<Due>({
    name: 'delivery-due',
    text: DUE_QUERY,
    values: [limit, leftOut, LOOKAHEAD_S],
  });
  return rows;
}

/**
 * The first `share(endpoint)` of each endpoint's, in due order. Without it, a claim led by an endpoint that
 * does not answer took nothing else and filled the worker's queue until its sends timed out (bench
 * isolation, at 32 in flight: the healthy endpoints' throughput fell to 0.17 of what it was without).
 */
function shares(due: Due[], share: (endpointId: string) => number): { heads: Due[]; unfinished: string[] } {
  const taken = new Map<string, number>();
  const unfinished = new Set<string>();
  const heads = due.filter((d) => {
    const n = (taken.get(d.endpoint_id) ?? 0) + 1;
    taken.set(d.endpoint_id, n);
    if (n <= share(d.endpoint_id)) return true;
    unfinished.add(d.endpoint_id);
    return false;
  });
  return { heads, unfinished: [...unfinished] };
}

/**
 * The deliveries behind each head in its lane, in order, up to $6 a head. Named, so that it is planned once
 * per connection like the claim's other statements; its generic plan walks each lane by its index
 * (test/statistics.test.ts), whatever the limit.
 */
export const RUNS_BEHIND = `
  select f.*, h.head_id
    from unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::uuid[])
         as h(project_id, endpoint_id, lane, seq, head_id)
   cross join lateral (
     select q.project_id, q.delivery_id as id, q.ctid, q.event_created_at, q.endpoint_id, q.lane, q.seq,
            q.throttled, q.held, q.lease_until, extract(epoch from q.next_attempt_at)::float8 as due_at
       from delivery_queue q
      where q.endpoint_id = h.endpoint_id and q.lane = h.lane and q.seq > h.seq and q.project_id = h.project_id
      order by q.seq
      limit $6
        for update nowait) f
   order by f.seq`;

/**
 * Each head with the run behind it in its lane: the deliveries that follow it in order, held for it, due
 * and not leased. Locked without waiting (another transaction may be cancelling or re-laning them): if
 * any is taken, every head goes alone this time.
 */
async function runsBehind(tx: Db, heads: Due[]): Promise<Due[][]> {
  const laned = heads.filter((h) => h.lane !== null);
  if (laned.length === 0) return heads.map((h) => [h]);
  let followers: Due[] = [];
  await tx.query('savepoint run');
  try {
    const { rows } = await tx.query<Due>({
      name: 'delivery-runs-behind',
      text: RUNS_BEHIND,
      values: [
        laned.map((h) => h.project_id),
        laned.map((h) => h.endpoint_id),
        laned.map((h) => h.lane),
        laned.map((h) => h.seq),
        laned.map((h) => h.id),
        Math.max(10, Math.floor(RUN_BUDGET / laned.length)),
      ],
    });
    followers = rows;
    await tx.query('release savepoint run');
  } catch (error) {
    if (pgCode(error) !== '55P03') throw error; // lock_not_available
    await tx.query('rollback to savepoint run');
  }
  const now = heads[0]?.now ?? 0;
  const behind = Map.groupBy(followers, (f) => f.head_id);
  return heads.map((head) => {
    const run = [head];
    for (const f of behind.get(head.id) ?? []) {
      // The run stops at the first that is not simply waiting its turn.
      const free = f.lease_until === null || f.lease_until.getTime() < now * 1000;
      if (f.held !== 'ordered' || !free || f.due_at > now) break;
      run.push({ ...head, ...f });
    }
    return run;
  });
}

/**
 * What becomes of each delivery of the runs: claimed to be sent now (or at its slot), or pushed to its
 * slot; the rate-limited endpoints' next free slots are written with the leases (apply).
 */
async function paceRuns(tx: Db, runs: Due[][], now: number) {
  const actions: Action[] = [];
  const limited = new Map<string, Due[][]>();
  for (const run of runs) {
    const head = run[0] as Due;
    if (head.rate === null) {
      for (const due of run) actions.push({ due, action: 'claim', at: Math.max(due.due_at, now) });
    } else limited.set(head.endpoint_id, [...(limited.get(head.endpoint_id) ?? []), run]);
  }
  if (limited.size === 0) return { actions, slots: [] };
  // An endpoint another claim is pacing right now is left to it: its deliveries stay in the queue.
  const { rows } = await tx.query<{ ctid: string; id: string; next_free: number | null }>({
    name: 'delivery-pace', // planned once for every claim, as the claim's other statements are
    text: `select ctid, id, extract(epoch from rate_next_at)::float8 as next_free from webhook_endpoints
            where (project_id, id) in (select * from unnest($1::uuid[], $2::uuid[]))
            order by id
              for no key update skip locked`,
    values: [[...limited.values()].map((runs) => runs[0]?.[0]?.project_id), [...limited.keys()]],
  });
  /** the rate-limited endpoints' rows (where they are: locked, so they do not move) and next free slots */
  const slots: { ctid: string; next_free: number }[] = [];
  for (const endpoint of rows) {
    const runsOf = limited.get(endpoint.id) ?? [];
    const flat = runsOf.flatMap((run) => run.map((due, i) => ({ due, follower: i > 0 })));
    const rate = flat[0]?.due.rate as number;
    const { paced, nextFree } = pace(
      flat.map(({ due, follower }) => ({ throttled: due.throttled, dueAt: due.due_at, follower })),
      rate,
      endpoint.next_free,
      now,
    );
    flat.forEach(({ due }, i) => {
      const p = paced[i] as Paced;
      if (p.sendAt !== undefined) actions.push({ due, action: 'claim', at: p.sendAt });
      else if (p.pushTo !== undefined) actions.push({ due, action: 'push', at: p.pushTo });
    });
    slots.push({ ctid: endpoint.ctid, next_free: nextFree });
  }
  return { actions, slots };
}

/**
 * Holds the queued deliveries of paused endpoints (their pause missed them: they were in flight or being
 * created). Only under the endpoint's lane lock, taken without waiting, and on a fresh read of the pause,
 * so that a resume that has just committed is seen; an endpoint whose lock is busy is left for later.
 */
async function holdPaused(tx: Db, paused: Due[]) {
  const { rows } = await tx.query<{ endpoint_id: string }>(
    `select endpoint_id from unnest($1::uuid[]) as e(endpoint_id)
      where pg_try_advisory_xact_lock(${LANE_LOCK}, hashtext(endpoint_id::text))`,
    [[...new Set(paused.map((d) => d.endpoint_id))]],
  );
  if (rows.length === 0) return;
  const locked = new Set(rows.map((r) => r.endpoint_id));
  const mine = paused.filter((d) => locked.has(d.endpoint_id));
  await tx.query(
    `update delivery_queue q set held = 'paused'
       from webhook_endpoints w
      where q.delivery_id = any ($1::uuid[]) and w.project_id = q.project_id and w.id = q.endpoint_id and w.paused`,
    [mine.map((d) => d.id)],
  );
}

/**
 * Leases, and cancels, pushes and paces, in one statement; the leased deliveries with what their sends
 * need. Every row it writes is one the claim locked, so each is found where the claim found it (by ctid),
 * with no second lookup by key; a join to a batch the planner cannot count read the whole table at each
 * claim. A claim that only leases (the common case) runs LEASE alone: the other branches, given nothing,
 * still cost each execution their setup, the history's update over every day's partition among them.
 */
async function apply(
  tx: Db,
  { actions, slots }: Awaited<ReturnType<typeof paceRuns>>,
  cancel: Due[],
  options: { leaseSeconds: number; token: string; holder: number },
) {
  const claims = actions.filter((a) => a.action === 'claim');
  const pushes = actions.filter((a) => a.action === 'push');
  const lease = [
    options.leaseSeconds,
    options.token,
    options.holder,
    claims.map((a) => a.due.ctid),
    claims.map((a) => a.at),
    ...daysOf(claims.map((a) => a.due.event_created_at)),
  ];
  const onlyLeases = slots.length === 0 && cancel.length === 0 && pushes.length === 0;
  const { rows } = await tx.query<Leased>(
    onlyLeases
      ? { name: 'delivery-lease', text: `${LEASE} ${LEASED}`, values: lease }
      : {
          name: 'delivery-claim',
          text: `${LEASE}${DECIDED} ${LEASED}`,
          values: [
            ...lease,
            slots.map((s) => s.ctid),
            slots.map((s) => s.next_free),
            cancel.map((d) => d.ctid),
            cancel.filter((d) => !d.found).map((d) => d.ctid),
            pushes.map((a) => a.due.ctid),
            pushes.map((a) => a.at),
            ...daysOf(cancel.map((d) => d.event_created_at)),
          ],
        },
  );
  const endpoints = new Map(claims.map(({ due }) => [due.id, due]));
  return withBodies(rows, endpoints);
}
