// The project's event log: every event, newest first, with its deliveries by state, filtered by type,
// by a delivery's state and by time; each event opens its own screen (payload, deliveries, replay). A
// message a receiver got is found by its webhook-id, which is its event's id.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { follow, navigate } from '../router.ts';
import { DELIVERY_STATES, DeliveryBadge, Failure, StateSelect } from './common.tsx';

type EventPage = Schemas['EventPage'];
type Listed = EventPage['data'][number];

export function EventsScreen() {
  const { t, date } = useLocale();
  const [filter, setFilter] = useState<Record<string, string>>({});
  const [rows, setRows] = useState<Listed[]>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [failure, setFailure] = useState<unknown>();
  // A filtered request reads a bounded number of events: a page may come back empty with a cursor to go
  // on. The screen goes on by itself a few times before it asks.
  const load = (after?: string, tries = 5): Promise<void> => {
    const search = new URLSearchParams({ limit: '25', ...filter });
    if (after) search.set('cursor', after);
    return call<EventPage>('GET', `/core/v1/events?${search}`).then((page) => {
      setRows((shown) => [...(after ? (shown ?? []) : []), ...page.data]);
      setCursor(page.nextCursor);
      setFailure(undefined);
      if (page.data.length === 0 && page.nextCursor && tries > 1) return load(page.nextCursor, tries - 1);
    }, setFailure);
  };
  useEffect(() => {
    setRows(undefined);
    void load();
  }, [filter]);
  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const chosen: Record<string, string> = {};
    for (const name of ['type', 'state', 'since', 'until']) {
      const value = String(form.get(name) ?? '').trim();
      if (!value) continue;
      // datetime-local is the browser's local time; the API takes an instant
      chosen[name] = name === 'since' || name === 'until' ? new Date(value).toISOString() : value;
    }
    setFilter(chosen);
  };
  const [notAnId, setNotAnId] = useState(false);
  const find = (event: SubmitEvent) => {
    event.preventDefault();
    const id = String(new FormData(event.currentTarget as HTMLFormElement).get('id') ?? '')
      .trim()
      .toLowerCase();
    const valid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);
    setNotAnId(!valid);
    if (valid) navigate(`/portal/events/${id}`);
  };
  return (
    <>
      <h1 tabIndex={-1}>{t('events.title')}</h1>
      <search>
        <form class="inline" onSubmit={find}>
          <label for="events-find">{t('events.find')}</label>
          <input
            id="events-find"
            name="id"
            spellcheck={false}
            placeholder="0193b0a4-1e0b-7d4e-…"
            aria-invalid={notAnId ? 'true' : undefined}
            aria-describedby={notAnId ? 'events-find-error' : undefined}
          />
          <button type="submit" class="secondary">
            {t('events.findGo')}
          </button>
        </form>
      </search>
      {notAnId && (
        <p id="events-find-error" class="field-error">
          {t('events.notAnId')}
        </p>
      )}
      <form class="inline" onSubmit={apply}>
        <label for="events-type">{t('log.filterType')}</label>
        <input id="events-type" name="type" placeholder="pay.payment.succeeded" />
        <label for="events-state">{t('events.withState')}</label>
        <StateSelect id="events-state" />
        <label for="events-since">{t('events.since')}</label>
        <input id="events-since" name="since" type="datetime-local" />
        <label for="events-until">{t('events.until')}</label>
        <input id="events-until" name="until" type="datetime-local" />
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
        <p>{t(cursor ? 'events.lookFurther' : 'events.empty')}</p>
      ) : (
        <table class="log">
          <thead>
            <tr>
              <th scope="col">{t('log.event')}</th>
              <th scope="col">{t('event.deliveries')}</th>
              <th scope="col">{t('log.created')}</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((event) => (
              <tr key={event.id} data-state={event.deliveries.dead > 0 ? 'dead' : undefined}>
                <td>
                  <a
                    href={`/portal/events/${event.id}`}
                    onClick={(e) => follow(e, `/portal/events/${event.id}`)}
                  >
                    {event.type}
                  </a>
                </td>
                <td>
                  <Counts deliveries={event.deliveries} />
                </td>
                <td>{date(event.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" class="secondary" onClick={() => load(cursor)}>
          {t('log.more')}
        </button>
      )}
    </>
  );
}

/** Its deliveries by state, the states it has only (none: "no delivery"). */
function Counts({ deliveries }: { deliveries: Listed['deliveries'] }) {
  const { t, number } = useLocale();
  const present = DELIVERY_STATES.filter((state) => deliveries[state] > 0);
  if (present.length === 0) return <span class="hint">{t('events.noDelivery')}</span>;
  return (
    <span class="counts">
      {present.map((state) => (
        <DeliveryBadge key={state} state={state} count={number(deliveries[state])} />
      ))}
    </span>
  );
}
