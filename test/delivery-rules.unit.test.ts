// The delivery worker's rules that need no database: when it claims (scheduler.ts), what it holds of
// each endpoint (held.ts), the pace of a rate-limited endpoint (pacing.ts), what an answer means
// (outcome.ts), and the order lane locks are taken in (delivery-store/lanes.ts). Run alone in under 2 s:
// node --test test/*.unit.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Db } from '../src/db/database.ts';
import { type Held, HeldRuns } from '../src/delivery/held.ts';
import { nextState } from '../src/delivery/outcome.ts';
import { type ClaimPlan, ClaimScheduler } from '../src/delivery/scheduler.ts';
import { lockLanes, promote, settle } from '../src/delivery-store/lanes.ts';
import { LOOKAHEAD_S, pace } from '../src/delivery-store/pacing.ts';
import type { Run } from '../src/delivery-store/run.ts';

/** A claim that resolves when the test says, with the count of due deliveries the test gives. */
function plannedScheduler(overrides: Partial<ClaimPlan> = {}) {
  const claims: { limit: number; leftOut: string[]; finish: (due: number, unfinished?: string[]) => void }[] =
    [];
  const plan: ClaimPlan = {
    free: () => 100,
    leftOut: () => [],
    belowHighWater: () => true,
    capacity: 100,
    batch: 40,
    claim: (limit, leftOut) =>
      new Promise((resolve) =>
        claims.push({ limit, leftOut, finish: (due, unfinished = []) => resolve({ due, unfinished }) }),
      ),
    failed: () => {},
    ...overrides,
  };
  return { scheduler: new ClaimScheduler(plan), claims };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('the claim scheduler', () => {
  test('STOPPED until started; a start claims; a short claim leaves it WAITING', async () => {
    const { scheduler, claims } = plannedScheduler();
    scheduler.wake();
    assert.equal(scheduler.state, 'STOPPED');
    assert.equal(claims.length, 0, 'a stopped scheduler never claims');
    scheduler.start();
    assert.equal(scheduler.state, 'CLAIMING');
    assert.deepEqual(
      claims.map((c) => c.limit),
      [40],
      'one claim of the batch',
    );
    claims[0]?.finish(3);
    await settled();
    assert.equal(scheduler.state, 'WAITING');
    assert.equal(claims.length, 1);
  });

  test('wake-ups during a claim coalesce into one more claim (CLAIMING_AGAIN)', async () => {
    const { scheduler, claims } = plannedScheduler();
    scheduler.start();
    scheduler.wake();
    scheduler.wake();
    assert.equal(scheduler.state, 'CLAIMING_AGAIN');
    claims[0]?.finish(0);
    await settled();
    assert.equal(claims.length, 2, 'exactly one more');
    assert.equal(scheduler.state, 'CLAIMING');
    claims[1]?.finish(0);
    await settled();
    assert.equal(scheduler.state, 'WAITING');
  });

  test('a full claim means a backlog: it claims again while a quarter of the capacity is free', async () => {
    let free = 100;
    const { scheduler, claims } = plannedScheduler({ free: () => free });
    scheduler.start();
    claims[0]?.finish(40);
    await settled();
    assert.equal(claims.length, 2, 'full: more may be due');
    free = 20; // under a quarter of the capacity: not worth a claim
    claims[1]?.finish(40);
    await settled();
    assert.equal(claims.length, 2);
    assert.equal(scheduler.state, 'WAITING');
    assert.equal(scheduler.worthClaiming(), false);
  });

  test('with every endpoint at its mark and the queue found short, its own wake-ups claim nothing', async () => {
    let leftOut = ['endpoint-a'];
    const { scheduler, claims } = plannedScheduler({ leftOut: () => leftOut });
    scheduler.start();
    claims[0]?.finish(5); // fewer than asked: every other due delivery was taken
    await settled();
    scheduler.wake(false);
    await settled();
    assert.equal(claims.length, 1, 'it could only walk the queue to find nothing');
    leftOut = [];
    scheduler.wake(false);
    assert.equal(claims.length, 2, 'an endpoint no longer left out may have deliveries due');
    claims[1]?.finish(0);
    await settled();
    leftOut = ['endpoint-a'];
    scheduler.wake(true);
    assert.equal(claims.length, 3, 'a wake-up from outside may mean anything');
  });

  test('only what a short claim did not take, or what was handed back, is worth its own wake-ups', async () => {
    let leftOut = ['busy'];
    const { scheduler, claims } = plannedScheduler({ leftOut: () => leftOut });
    scheduler.start();
    claims[0]?.finish(5, ['capped']); // short, and `capped` had more due than its share
    await settled();
    leftOut = ['busy', 'capped'];
    scheduler.wake(false);
    await settled();
    assert.equal(claims.length, 1, 'both at their mark: nothing else is due');
    leftOut = ['busy'];
    scheduler.wake(false);
    assert.equal(claims.length, 2, 'below its high-water mark, the rest of `capped` may be claimed');
    claims[1]?.finish(3); // short, and every endpoint found was taken whole
    await settled();
    scheduler.wake(false);
    await settled();
    assert.equal(
      claims.length,
      2,
      'an endpoint held below its high-water mark with nothing more due is no reason',
    );
    scheduler.handedBack('failing');
    assert.equal(claims.length, 2, 'a hand-back does not claim by itself');
    scheduler.wake(false);
    assert.equal(claims.length, 3, 'the next wake-up claims what was handed back');
    scheduler.handedBack('late'); // while that claim runs: it may not have seen them
    claims[2]?.finish(0);
    await settled();
    scheduler.wake(false);
    assert.equal(claims.length, 4, 'a hand-back during a claim outlives it');
  });

  test('a run ending wakes it when its endpoint falls below its high-water mark or nothing is in flight', async () => {
    let leftOut = ['endpoint-a'];
    const { scheduler, claims } = plannedScheduler({ leftOut: () => leftOut });
    scheduler.start();
    claims[0]?.finish(0);
    await settled();
    scheduler.runEnded(5, 8, 3);
    assert.equal(claims.length, 1, 'still at its mark and others in flight, no backlog');
    leftOut = [];
    scheduler.runEnded(7, 8, 3);
    assert.equal(claims.length, 2, 'one below its high-water mark: no longer left out');
    claims[1]?.finish(0);
    await settled();
    scheduler.runEnded(2, 8, 0);
    assert.equal(claims.length, 3, 'nothing in flight');
  });

  test('stop ends it: a claim in flight finishes and nothing follows; a failed claim waits for the poll', async () => {
    const failures: unknown[] = [];
    const { scheduler, claims } = plannedScheduler({ failed: (error) => failures.push(error) });
    scheduler.start();
    scheduler.wake();
    scheduler.stop();
    claims[0]?.finish(40);
    await settled();
    assert.equal(scheduler.state, 'STOPPED');
    assert.equal(claims.length, 1);
    const failing = new ClaimScheduler({
      free: () => 10,
      leftOut: () => [],
      belowHighWater: () => true,
      capacity: 10,
      batch: 10,
      claim: async () => {
        throw new Error('the database went away');
      },
      failed: (error) => failures.push(error),
    });
    failing.start();
    await settled();
    assert.equal(failing.state, 'WAITING');
    assert.equal(failures.length, 1);
  });
});

const runOf = (endpointId: string): Held => ({
  run: { endpointId, deliveries: [], claimedAt: 0 } as Run,
  token: 't',
  claimedHere: 0,
  stopped: false,
});

describe('what a worker holds', () => {
  test('an endpoint sends at most a quarter of the slots; endpoints take free slots in turn', () => {
    const held = new HeldRuns(8); // 2 a endpoint, mark 4
    for (let i = 0; i < 4; i++) held.add(runOf('a'));
    held.add(runOf('b'));
    const started = held.start(8).map((h) => h.run.endpointId);
    assert.deepEqual(started.sort(), ['a', 'a', 'b'], 'a takes its cap, b its run');
    assert.deepEqual(held.atHighWater(), ['a'], 'a holds its high-water mark: left out of claims');
    assert.equal(held.belowHighWater(), true, 'b is below its high-water mark');
    assert.equal(held.waitingCount, 2);
  });

  test('finishing a run frees its slot; dropping an endpoint stops its runs and returns the waiting', () => {
    const held = new HeldRuns(8);
    for (let i = 0; i < 3; i++) held.add(runOf('a'));
    const [first, second] = held.start(8);
    assert.ok(first && second);
    assert.equal(held.finished(first), 2, 'two runs left');
    const waiting = held.drop('a');
    assert.equal(waiting.length, 1);
    assert.equal(second.stopped, true, 'the one in flight stops after its send');
    assert.equal(held.finished(second), 0);
    assert.equal(held.belowHighWater(), true, 'nothing held');
  });

  test('a claim may take half the free capacity for an endpoint that answers quickly, a high-water mark’s worth otherwise', () => {
    const held = new HeldRuns(8);
    held.answered('quick', 20);
    held.answered('slow', 5000);
    const share = held.shareOf(100);
    assert.equal(share('quick'), 50);
    assert.equal(share('slow'), 4);
    assert.equal(share('never-heard-from'), 4);
  });
});

describe('pacing a rate-limited endpoint', () => {
  test('each delivery takes the next slot, 1/rate apart; beyond the lookahead it is pushed to its slot', () => {
    const now = 1000;
    const deliveries = Array.from({ length: 4 }, () => ({ throttled: false, dueAt: now, follower: false }));
    const { paced, nextFree } = pace(deliveries, 10, null, now);
    const slots = paced.map((p) => [
      p.sendAt === undefined ? 'push' : 'send',
      (p.sendAt ?? p.pushTo ?? 0) - now,
    ]);
    const expected = [
      ['send', 0],
      ['send', 0.1],
      ['send', 0.2],
      ['push', 0.3],
    ];
    for (const [i, [kind, offset]] of expected.entries()) {
      assert.equal(slots[i]?.[0], kind);
      assert.ok(Math.abs((slots[i]?.[1] as number) - (offset as number)) < 1e-9, String(slots[i]));
    }
    assert.ok(0.3 > LOOKAHEAD_S);
    assert.ok(Math.abs(nextFree - 1000.4) < 1e-9);
  });

  test('a pushed delivery sends at its slot without another; one late past a second takes a new one', () => {
    const now = 1000;
    const { paced } = pace(
      [
        { throttled: true, dueAt: 999.5, follower: false },
        { throttled: true, dueAt: 990, follower: false },
      ],
      1,
      1005,
      now,
    );
    assert.deepEqual(paced, [{ sendAt: 1000 }, { pushTo: 1005 }]);
  });

  test('a follower behind a lane head is never pushed, only left for a later claim', () => {
    const { paced } = pace([{ throttled: false, dueAt: 1000, follower: true }], 1, 1010, 1000);
    assert.deepEqual(paced, [{}]);
  });
});

describe('what an answer means', () => {
  const result = (statusCode: number | null, retryAfter: number | null = null) => ({
    delivered: statusCode !== null && statusCode < 300,
    statusCode,
    retryAfter,
    error: statusCode === null ? 'timeout' : null,
    durationMs: 5,
    responseBody: null,
  });
  const schedule = [5, 300];

  test('2xx delivered; 410 dead at once; the last attempt of the schedule dead', () => {
    assert.deepEqual(nextState(1, true, result(204), schedule), { state: 'delivered', retryIn: 0 });
    assert.deepEqual(nextState(1, false, result(410), schedule), { state: 'dead', retryIn: 0 });
    assert.deepEqual(nextState(3, false, result(500), schedule), { state: 'dead', retryIn: 0 });
  });

  test('otherwise retried after the schedule ±10 %, or the receiver’s retry-after within 1 s and an hour', () => {
    for (let i = 0; i < 50; i++) {
      const { state, retryIn } = nextState(2, false, result(500), schedule);
      assert.equal(state, 'pending');
      assert.ok(retryIn >= 270 && retryIn <= 330, String(retryIn));
    }
    assert.equal(nextState(1, false, result(429, 0), schedule).retryIn, 1);
    assert.equal(nextState(1, false, result(503, 99_999), schedule).retryIn, 3600);
    assert.equal(nextState(1, false, result(null), schedule).state, 'pending', 'no answer: retried');
  });
});

describe('lane locks', () => {
  /** A handle that records what it is asked (the statements' order and values, not their effect). */
  const recording = () => {
    const asked: { text: string; values: unknown[] }[] = [];
    const db = {
      query: async (text: string, values: unknown[]) => {
        asked.push({ text, values });
        return { rows: [], rowCount: 0 };
      },
    } as unknown as Db;
    return { db, asked };
  };

  test('are taken once each, in one order whatever the callers’ order, so two takers never deadlock', async () => {
    const { db, asked } = recording();
    await lockLanes(db, ['c', 'a', 'b', 'a']);
    await lockLanes(db, ['b', 'c', 'a']);
    assert.deepEqual(
      asked.map((q) => q.values[0]),
      [
        ['a', 'b', 'c'],
        ['a', 'b', 'c'],
      ],
    );
  });

  test('nothing to lock or promote asks nothing', async () => {
    const { db, asked } = recording();
    await lockLanes(db, []);
    await promote(db, []);
    await settle(db, []);
    assert.equal(asked.length, 0);
  });
});
