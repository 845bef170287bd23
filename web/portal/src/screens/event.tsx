// One event: its payload, its deliveries to each endpoint, and a replay to the endpoints subscribed now.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { indentJson, memberText } from '../json-text.ts';
import { follow } from '../router.ts';
import { DeliveriesHead, DeliveryBadge, Failure, labelOf } from './common.tsx';

type Event = Schemas['Event'];

export function EventScreen({ id }: { id: string }) {
  const { t, date } = useLocale();
  const [event, setEvent] = useState<Event>();
  /** the data as published: cut from the answer's text, laid out, never parsed into values */
  const [data, setData] = useState('');
  const [failure, setFailure] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const [pending, setPending] = useState(false);
  /** each endpoint's name (or URL), to call a delivery's endpoint by it */
  const [names, setNames] = useState(new Map<string, string>());
  useEffect(
    () =>
      void call<Schemas['DestinationList']>('GET', '/core/v1/destinations').then(
        (r) => setNames(new Map(r.data.map((e) => [e.id, labelOf(t, e)]))),
        () => {}, // the deliveries still show, by the endpoint's id
      ),
    [],
  );
  const load = () =>
    call<{ body: Event; text: string }>('GET', `/core/v1/events/${id}`, { asText: true }).then(
      ({ body, text }) => {
        setEvent(body);
        setData(indentJson(memberText(text, 'data') ?? ''));
      },
      setFailure,
    );
  useEffect(() => void load(), [id]);
  const replay = async () => {
    setPending(true);
    setFailure(undefined);
    try {
      const { deliveries } = await call<Schemas['WebhookReplayResult']>(
        'POST',
        `/core/v1/events/${id}/replay`,
      );
      setNotice(t('event.replayed', { count: deliveries }));
      await load();
    } catch (error) {
      setFailure(error);
    } finally {
      setPending(false);
    }
  };
  if (!event) return failure ? <Failure error={failure} /> : <p>{t('loading')}</p>;
  return (
    <>
      <h1 tabIndex={-1}>{event.type}</h1>
      <p class="state">
        {date(event.createdAt)} · <code>{event.id}</code>
      </p>
      <h2>{t('event.payload')}</h2>
      {event.redacted ? <p>{t('event.redacted')}</p> : <pre class="payload">{data}</pre>}
      <div class="actions">
        <button type="button" disabled={pending} onClick={replay}>
          {t('event.replay')}
        </button>
      </div>
      {notice && <p role="status">{notice}</p>}
      <Failure error={failure} />
      <h2>{t('event.deliveries')}</h2>
      <table>
        <DeliveriesHead first={t('endpoints.title')} />
        <tbody>
          {event.deliveries.map((delivery) => (
            <tr key={delivery.id} data-state={delivery.state}>
              <td>
                <a
                  href={`/portal/endpoints/${delivery.endpointId}`}
                  onClick={(e) => follow(e, `/portal/endpoints/${delivery.endpointId}`)}
                >
                  {names.get(delivery.endpointId) ??
                    `${t('event.endpoint')} ${delivery.endpointId.slice(0, 8)}`}
                </a>
              </td>
              <td>
                <DeliveryBadge state={delivery.state} />
              </td>
              <td>{delivery.lastStatus ?? '—'}</td>
              <td>{delivery.attemptCount}</td>
              <td>{date(delivery.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
