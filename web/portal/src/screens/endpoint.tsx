// One endpoint: its secret (shown once, at creation and rotation), the actions on it, its rate, and its
// delivery log, newest first, refreshed while it is open and loaded further as it scrolls.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, type Deliveries, type Endpoint, newKey, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { follow } from '../router.ts';
import { DeliveriesHead, Failure, stateOf } from './common.tsx';
import { freshSecrets } from './endpoints.tsx';

export function EndpointScreen({ id }: { id: string }) {
  const { t } = useLocale();
  const [endpoint, setEndpoint] = useState<Endpoint>();
  const [secret, setSecret] = useState(() => freshSecrets.get(id));
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const path = `/core/v1/webhook-endpoints/${id}`;
  // One idempotency key per intended action, kept until it is answered: a retry after a lost answer
  // repeats the same action rather than making a second one.
  const keys = useRef(new Map<string, string>());
  useEffect(() => {
    freshSecrets.delete(id);
    call<Endpoint>('GET', path).then(setEndpoint, setFailure);
  }, [id]);

  const act = async (action: string, done?: (answer: unknown) => void) => {
    setPending(true);
    setFailure(undefined);
    setNotice(undefined);
    const idempotencyKey = keys.current.get(action) ?? newKey();
    keys.current.set(action, idempotencyKey);
    try {
      const answer = await call<unknown>('POST', `${path}/${action}`, { idempotencyKey });
      keys.current.delete(action);
      done?.(answer);
      setEndpoint(await call<Endpoint>('GET', path));
    } catch (error) {
      // A refusal is an answer (and recorded under the key): the next click is a new attempt. No answer,
      // a 5xx, a 409 (still running) or a 429 keep the key, so the retry is the same action.
      if (error instanceof ApiError && error.status < 500 && ![409, 429].includes(error.status))
        keys.current.delete(action);
      setFailure(error);
    } finally {
      setPending(false);
    }
  };
  if (!endpoint) return failure ? <Failure error={failure} /> : <p>{t('loading')}</p>;
  return (
    <>
      <p>
        <a href="/portal/" onClick={(e) => follow(e, '/portal/')}>
          ← {t('endpoint.back')}
        </a>
      </p>
      <h1 tabIndex={-1}>{endpoint.url}</h1>
      <p class="state">{t(stateOf(endpoint))}</p>
      {secret && <Secret value={secret} />}
      <div class="actions" aria-live="polite">
        <button
          type="button"
          disabled={pending}
          onClick={() =>
            act('rotate-secret', (a) => setSecret((a as Schemas['WebhookSecretRotated']).secret))
          }
        >
          {t('endpoint.rotate')}
        </button>
        {endpoint.hasPreviousSecret && (
          <button
            type="button"
            class="secondary"
            disabled={pending}
            onClick={() => act('retire-previous-secret')}
          >
            {t('endpoint.retire')}
          </button>
        )}
        <button
          type="button"
          class="secondary"
          disabled={pending}
          onClick={() => act(endpoint.paused ? 'resume' : 'pause')}
        >
          {t(endpoint.paused ? 'endpoint.resume' : 'endpoint.pause')}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={pending}
          onClick={() => act('test', () => setNotice(t('endpoint.testSent')))}
        >
          {t('endpoint.test')}
        </button>
      </div>
      {notice && <p role="status">{notice}</p>}
      <Failure error={failure} />
      <RateForm endpoint={endpoint} onSaved={setEndpoint} />
      <DeliveryLog endpointId={id} />
    </>
  );
}

function Secret({ value }: { value: string }) {
  const { t } = useLocale();
  const [copied, setCopied] = useState(false);
  return (
    <section class="secret" aria-labelledby="secret-title">
      <h2 id="secret-title">{t('secret.title')}</h2>
      <p>{t('secret.once')}</p>
      <code data-testid="secret">{value}</code>{' '}
      <button type="button" onClick={() => navigator.clipboard.writeText(value).then(() => setCopied(true))}>
        {copied ? t('secret.copied') : t('secret.copy')}
      </button>
    </section>
  );
}

function RateForm({ endpoint, onSaved }: { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void }) {
  const { t } = useLocale();
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const raw = String(new FormData(event.currentTarget as HTMLFormElement).get('rate') ?? '').trim();
    setSaved(false);
    try {
      const body = { rateLimitPerSecond: raw === '' ? null : Number(raw) };
      onSaved(await call<Endpoint>('PATCH', `/core/v1/webhook-endpoints/${endpoint.id}`, { body }));
      setSaved(true);
      setFailure(undefined);
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <form class="inline" onSubmit={submit}>
      <label for="rate">{t('endpoint.rate')}</label>
      <input
        id="rate"
        name="rate"
        inputMode="numeric"
        placeholder={t('endpoint.rateNone')}
        defaultValue={endpoint.rateLimitPerSecond?.toString() ?? ''}
      />
      <button type="submit" class="secondary">
        {t('endpoint.saveRate')}
      </button>
      {saved && <span role="status">{t('endpoint.saved')}</span>}
      <Failure error={failure} />
    </form>
  );
}

type Delivery = Deliveries['data'][number];

function DeliveryLog({ endpointId }: { endpointId: string }) {
  const { t, date } = useLocale();
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
    return `/core/v1/webhook-endpoints/${endpointId}/deliveries?${search}`;
  };
  // The newest page again every two seconds, merged over what is shown, so a test event is seen arriving.
  useEffect(() => {
    setRows(undefined);
    setCursor(null);
    // A failed poll says so (and the next one clears it); it never ends as an unhandled rejection.
    const refresh = () =>
      call<Deliveries>('GET', query()).then((page) => {
        setRows((shown) => merge(page.data, shown ?? []));
        setCursor((known) => known ?? page.nextCursor);
        setFailure(undefined);
      }, setFailure);
    void refresh();
    const timer = setInterval(refresh, 2000);
    return () => clearInterval(timer);
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
        <select id="filter-state" name="state">
          <option value="">{t('log.any')}</option>
          {STATES.map((state) => (
            <option key={state} value={state}>
              {t(`state.${state}`)}
            </option>
          ))}
        </select>
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
          <DeliveriesHead first={t('log.event')} />
          <tbody>
            {rows.map((delivery) => (
              <tr key={delivery.id} data-state={delivery.state}>
                <td>
                  <a
                    href={`/portal/events/${delivery.eventId}`}
                    onClick={(e) => follow(e, `/portal/events/${delivery.eventId}`)}
                  >
                    {delivery.eventType}
                  </a>
                </td>
                <td>{t(`state.${delivery.state}`)}</td>
                <td>{delivery.lastStatus ?? '—'}</td>
                <td>
                  <details>
                    <summary>{delivery.attemptCount}</summary>
                    <Attempts delivery={delivery} />
                  </details>
                </td>
                <td>{date(delivery.createdAt)}</td>
              </tr>
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

const STATES = ['pending', 'delivered', 'dead', 'cancelled'] as const;

/** Newest first, as the API lists them, each numbered by its own attempt number. */
function Attempts({ delivery }: { delivery: Delivery }) {
  const { date } = useLocale();
  return (
    <ol class="attempts">
      {delivery.attempts.map((attempt) => (
        <li key={attempt.attempt} value={attempt.attempt}>
          {date(attempt.startedAt)} · {attempt.statusCode ?? attempt.error} · {attempt.durationMs} ms
          {attempt.responseBody && <pre>{attempt.responseBody}</pre>}
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
