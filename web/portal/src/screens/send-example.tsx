// Sending an endpoint an example of a type of the catalogue: pick a type that has an example, see it, send
// it signed to this endpoint only; the log above shows it arrive.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { Failure, useActionKeys } from './common.tsx';
import { eventTypes } from './type-picker.tsx';

type EventType = Schemas['EventType'];

export function SendExample({ endpointId }: { endpointId: string }) {
  const { t } = useLocale();
  const [types, setTypes] = useState<EventType[]>([]);
  const [chosen, setChosen] = useState('');
  const [sent, setSent] = useState(false);
  const [failure, setFailure] = useState<unknown>();
  const keys = useActionKeys();
  useEffect(
    () =>
      void eventTypes().then((all) => {
        // The project's own types first: an example of its events is what a developer wants to see.
        const withExample = all
          .filter((type) => type.example)
          .sort((a, b) => Number(a.source !== 'project') - Number(b.source !== 'project'));
        setTypes(withExample);
        setChosen((current) => current || (withExample[0]?.name ?? ''));
      }, setFailure),
    [],
  );
  if (types.length === 0) return <Failure error={failure} />;
  const example = types.find((type) => type.name === chosen)?.example;
  const send = async (event: SubmitEvent) => {
    event.preventDefault();
    const action = `example ${chosen}`;
    setSent(false);
    setFailure(undefined);
    try {
      await call('POST', `/core/v1/destinations/${endpointId}/test`, {
        body: { eventType: chosen },
        idempotencyKey: keys.of(action),
      });
      keys.settle(action);
      setSent(true);
    } catch (error) {
      keys.settle(action, error);
      setFailure(error);
    }
  };
  return (
    <section aria-labelledby="example-title">
      <h2 id="example-title">{t('example.title')}</h2>
      <form class="inline" onSubmit={send}>
        <label for="example-type">{t('example.type')}</label>
        <select
          id="example-type"
          value={chosen}
          onChange={(e) => {
            setChosen(e.currentTarget.value);
            setSent(false);
          }}
        >
          {types.map((type) => (
            <option key={type.name} value={type.name}>
              {type.name}
            </option>
          ))}
        </select>
        <button type="submit" class="secondary">
          {t('example.send')}
        </button>
        {sent && <span role="status">{t('example.sent', { type: chosen })}</span>}
      </form>
      {example && <pre class="payload wrap">{JSON.stringify(example, null, 2)}</pre>}
      <Failure error={failure} />
    </section>
  );
}
