// "Send an example" from the catalogue: an event of this type, its example as data, to one endpoint the
// developer picks (as the endpoint's own screen sends one), without leaving the type they are reading.
import { useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { Failure, labelOf, useActionKeys } from './common.tsx';

type Listed = Schemas['DestinationList']['data'][number];

export function SendTypeExample({ type, endpoints }: { type: string; endpoints: Listed[] }) {
  const { t } = useLocale();
  const [sent, setSent] = useState<string>();
  const [failure, setFailure] = useState<unknown>();
  const keys = useActionKeys();
  if (endpoints.length === 0) return null;
  const id = `send-${type}`;
  const send = async (event: SubmitEvent) => {
    event.preventDefault();
    const endpointId = String(new FormData(event.currentTarget as HTMLFormElement).get('endpoint') ?? '');
    const action = `${type} ${endpointId}`;
    setSent(undefined);
    setFailure(undefined);
    try {
      await call('POST', `/core/v1/destinations/${endpointId}/test`, {
        body: { eventType: type },
        idempotencyKey: keys.of(action),
      });
      keys.settle(action);
      const to = endpoints.find((e) => e.id === endpointId);
      setSent(to && labelOf(t, to));
    } catch (error) {
      keys.settle(action, error);
      setFailure(error);
    }
  };
  return (
    <form class="inline" onSubmit={send}>
      <label for={id}>{t('types.sendTo')}</label>
      <select id={id} name="endpoint">
        {endpoints.map((endpoint) => (
          <option key={endpoint.id} value={endpoint.id}>
            {labelOf(t, endpoint)}
          </option>
        ))}
      </select>
      <button type="submit" class="secondary">
        {t('example.send')}
      </button>
      {sent && <span role="status">{t('types.sentTo', { type, endpoint: sent })}</span>}
      <Failure error={failure} />
    </form>
  );
}
