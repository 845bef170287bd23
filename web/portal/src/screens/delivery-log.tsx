// An endpoint's delivery log, newest first: each delivery's state as a badge, its last answer, its
// attempts (numbered as the API numbers them), when it is tried next and why it waits, and Retry for a
// dead one or one waiting for its next try. Refreshed every two seconds, and every half second for ten
// seconds after a change the portal made (a retry, a test event, a recovery): what it sent is seen
// arriving. Loaded further as it scrolls.
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, changes, type Deliveries } from '../api.ts';
import { type MessageKey, useLocale } from '../i18n/index.ts';
import { follow } from '../router.ts';
import { DeliveryBadge, Failure, StateSelect, useActionKeys } from './common.tsx';

type Delivery = Deliveries['data'][number];

/** How often the log is read again; after a change, how closely, and for how long. */
const POLL_MS = 2000;
const FOLLOW_POLL_MS = 500;
const FOLLOW_MS = 10_000;

export function DeliveryLog({ endpointId }: { endpointId: string }) {
  const { t } = useLocale();
  const [rows, setRows] = useState<Delivery[]>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [filter, setFilter] = useState({ state: '', eventType: '' });
  const [failure, setFailure] = useState<unknown>();
  const more = useRef<HTMLButtonElement>(null);
  const query = (after?: string) => {
    const search = new URLSearchParams({ limit: '20' });
    if (filter.state) search.set('state', filter.state);
    if (filter.eventType) search.set('eventType', filter.eventType);
    if (after) search.set('cursor', after);
    return `/core/v1/destinations/${endpointId}/deliveries?${search}`;
  };
  const refresh = () =>
    call<Deliveries>('GET', query()).then((page) => {
      setRows((shown) => merge(page.data, shown ?? []));
      setCursor((known) => known ?? page.nextCursor);
      setFailure(undefined);
    }, setFailure);
  // The newest page again, merged over what is shown: every two seconds, and closely after a change. A
  // failed poll says so (and the next one clears it); it never ends as an unhandled rejection.
  useEffect(() => {
    setRows(undefined);
    setCursor(null);
    void refresh();
    let last = Date.now();
    let followUntil = 0;
    const timer = setInterval(() => {
      const now = Date.now();
      if (now - last < (now < followUntil ? FOLLOW_POLL_MS : POLL_MS)) return;
      last = now;
      void refresh();
    }, FOLLOW_POLL_MS);
    const followChange = () => {
      followUntil = Date.now() + FOLLOW_MS;
      last = Date.now();
      void refresh();
    };
    changes.addEventListener('change', followChange);
    return () => {
      clearInterval(timer);
      changes.removeEventListener('change', followChange);
    };
  }, [endpointId, filter]);
  const loadMore = () => {
    if (!cursor) return;
    void call<Deliveries>('GET', query(cursor)).then((page) => {
      setRows((shown) => merge(shown ?? [], page.data));
      setCursor(page.nextCursor);
    }, setFailure);
  };
  // Infinite scroll: the "load more" button loads as it comes into view (and stays a button for keyboards).
  useEffect(() => {
    if (!more.current) return;
    const observer = new IntersectionObserver(
      (entries) => entries.some((e) => e.isIntersecting) && loadMore(),
    );
    observer.observe(more.current);
    return () => observer.disconnect();
  }, [cursor]);
  const applyFilter = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setFilter({
      state: String(form.get('state') ?? ''),
      eventType: String(form.get('eventType') ?? '').trim(),
    });
  };

  return (
    <section aria-labelledby="log-title">
      <h2 id="log-title">{t('log.title')}</h2>
      <form class="inline" onSubmit={applyFilter}>
        <label for="filter-state">{t('log.filterState')}</label>
        <StateSelect id="filter-state" />
        <label for="filter-type">{t('log.filterType')}</label>
        <input id="filter-type" name="eventType" placeholder="pay.payment.succeeded" />
        <button type="submit" class="secondary">
          {t('log.filter')}
        </button>
      </form>
      <Failure error={failure} />
      {rows === undefined ? (
        failure ? null : (
          <p>{t('loading')}</p>
        )
      ) : rows.length === 0 ? (
        <p>{t('log.empty')}</p>
      ) : (
        <table class="log">
          <thead>
            <tr>
              <th scope="col">{t('log.event')}</th>
              <th scope="col">{t('log.state')}</th>
              <th scope="col">{t('log.status')}</th>
              <th scope="col">{t('log.attempts')}</th>
              <th scope="col">{t('log.next')}</th>
              <th scope="col">{t('log.created')}</th>
              <th scope="col">
                <span class="visually-hidden">{t('log.retry')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((delivery) => (
              <Row key={delivery.id} delivery={delivery} />
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button ref={more} type="button" class="secondary" onClick={loadMore}>
          {t('log.more')}
        </button>
      )}
    </section>
  );
}

/** A delivery's line; its Retry is a change, which the log follows (`changes`). */
function Row({ delivery }: { delivery: Delivery }) {
  const { t, date } = useLocale();
  const [failure, setFailure] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const keys = useActionKeys();
  const retryable = delivery.state === 'dead' || delivery.waitReason === 'retry';
  const retry = async () => {
    setPending(true);
    setFailure(undefined);
    try {
      await call('POST', `/core/v1/deliveries/${delivery.id}/retry`, { idempotencyKey: keys.of('retry') });
      keys.settle('retry');
    } catch (error) {
      keys.settle('retry', error);
      setFailure(error);
    } finally {
      setPending(false);
    }
  };
  return (
    <tr data-state={delivery.state}>
      <td>
        <a
          href={`/portal/events/${delivery.eventId}`}
          onClick={(e) => follow(e, `/portal/events/${delivery.eventId}`)}
        >
          {delivery.eventType}
        </a>
      </td>
      <td>
        <DeliveryBadge state={delivery.state} />
      </td>
      <td data-label={t('log.status')}>{delivery.lastStatus ?? delivery.lastError ?? '—'}</td>
      <td data-label={t('log.attempts')}>
        <details>
          <summary>{delivery.attemptCount}</summary>
          <Attempts delivery={delivery} />
        </details>
      </td>
      <td data-label={t('log.next')}>
        {delivery.nextAttemptAt ? date(delivery.nextAttemptAt) : '—'}
        {delivery.waitReason && <span class="hint"> · {t(`wait.${delivery.waitReason}` as MessageKey)}</span>}
      </td>
      <td data-label={t('log.created')}>{date(delivery.createdAt)}</td>
      <td>
        {retryable && (
          <button
            type="button"
            class="secondary"
            disabled={pending}
            aria-label={`${t('log.retry')} ${delivery.eventType} ${date(delivery.createdAt)}`}
            onClick={retry}
          >
            {t('log.retry')}
          </button>
        )}
        <Failure error={failure} />
      </td>
    </tr>
  );
}

/** Newest first, as the API lists them, each numbered by its own attempt number. */
function Attempts({ delivery }: { delivery: Delivery }) {
  const { t, date } = useLocale();
  return (
    <ol class="attempts">
      {delivery.attempts.map((attempt) => (
        <li key={attempt.attempt} value={attempt.attempt}>
          {date(attempt.startedAt)} · {attempt.statusCode ?? attempt.error} · {attempt.durationMs} ms
          {attempt.responseBody && <pre>{attempt.responseBody}</pre>}
          <details>
            <summary>{t('log.headers')}</summary>
            <pre>
              {Object.entries(attempt.requestHeaders)
                .map(([name, value]) => `${name}: ${value}`)
                .join('\n')}
            </pre>
          </details>
        </li>
      ))}
    </ol>
  );
}

/** Rows by id, the first list's version winning, newest first. */
function merge(first: Delivery[], second: Delivery[]): Delivery[] {
  const byId = new Map(second.map((row) => [row.id, row]));
  for (const row of first) byId.set(row.id, row);
  return [...byId.values()].sort(
    (a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id),
  );
}
