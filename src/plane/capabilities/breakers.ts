// The circuit breakers of capabilities' providers, as their instances report them (PUT
// /capability/v1/breakers): each report lives 30 s, and a provider's state is the one most of its live
// instances report (a tie takes the worse), or unknown when none reports. Health lists them all.
import type { Db } from '../../db/database.ts';
import type { BreakerState, CapabilityRegistry } from '../../registry.ts';

/** A report lives this long: an instance that stopped reporting stops counting. */
const REPORT_LIFE_SECONDS = 30;
/** Reports older than this are forgotten by maintenance (instances come and go). */
const FORGET_AFTER = '1 day';

export type ProviderState = BreakerState | 'unknown';

/** How many live instances of a capability report a provider's breaker in a state. */
export interface LiveReport {
  capability: string;
  provider: string;
  state: BreakerState;
  instances: number;
}

/** Worse first: a tie takes the first of these. */
const SEVERITY: BreakerState[] = ['open', 'half_open', 'closed'];

export const breakerStore = (db: Db) => ({
  /** An instance's report of its providers' breakers. */
  async report(capability: string, instance: string, providers: { provider: string; state: BreakerState }[]) {
    await db.query({
      name: 'breaker-report',
      text: `insert into capability_breaker_reports (capability, instance, provider, state, reported_at)
             select $1, $2, provider, state, now() from unnest($3::text[], $4::text[]) as r(provider, state)
             on conflict (capability, provider, instance) do update set state = excluded.state, reported_at = now()`,
      values: [capability, instance, providers.map((p) => p.provider), providers.map((p) => p.state)],
    });
  },

  /** How many live instances report each state of each provider. */
  async live(): Promise<LiveReport[]> {
    const { rows } = await db.query<LiveReport>({
      name: 'breaker-live',
      text: `select capability, provider, state, count(*)::int as instances from capability_breaker_reports
              where reported_at > now() - make_interval(secs => ${REPORT_LIFE_SECONDS})
              group by 1, 2, 3`,
    });
    return rows;
  },

  /** The live reports of one capability, newest first (for its operator). */
  async reportsOf(capability: string) {
    const { rows } = await db.query<{
      instance: string;
      provider: string;
      state: BreakerState;
      reported_at: Date;
    }>(
      `select instance, provider, state, reported_at from capability_breaker_reports
        where capability = $1 and reported_at > now() - make_interval(secs => ${REPORT_LIFE_SECONDS})
        order by reported_at desc, provider, instance limit 500`,
      [capability],
    );
    return rows.map((r) => ({ ...r, reported_at: r.reported_at.toISOString() }));
  },

  async forgetOld(): Promise<number> {
    const result = await db.query(
      `delete from capability_breaker_reports where reported_at < now() - interval '${FORGET_AFTER}'`,
    );
    return result.rowCount ?? 0;
  },
});

/**
 * Every declared provider of every capability of its own, as `capability/provider`, with the state most of
 * its live instances report; unknown when none does.
 */
export function providerStates(
  registry: CapabilityRegistry,
  live: LiveReport[],
): { provider: string; state: ProviderState }[] {
  return registry.list().flatMap((capability) =>
    (capability.providers ?? []).map((provider) => {
      const reports = live.filter((r) => r.capability === capability.name && r.provider === provider);
      const most = Math.max(0, ...reports.map((r) => r.instances));
      const state =
        most === 0
          ? 'unknown'
          : (SEVERITY.find((s) =>
              reports.some((r) => r.state === s && r.instances === most),
            ) as BreakerState);
      return { provider: `${capability.name}/${provider}`, state };
    }),
  );
}
