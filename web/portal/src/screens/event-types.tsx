// The event-type catalogue: the project's types and the platform's, each with its description, how many
// endpoints take it, its JSON Schema and an example of its data.
import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { Badge, Failure } from './common.tsx';
import { eventTypes } from './type-picker.tsx';

type EventType = Schemas['EventType'];

export function EventTypesScreen() {
  const { t } = useLocale();
  const [types, setTypes] = useState<EventType[]>();
  const [failure, setFailure] = useState<unknown>();
  useEffect(() => void eventTypes().then(setTypes, setFailure), []);
  return (
    <>
      <h1 tabIndex={-1}>{t('types.title')}</h1>
      <p>{t('types.intro')}</p>
      <Failure error={failure} />
      {types === undefined ? (
        failure ? null : (
          <p>{t('loading')}</p>
        )
      ) : types.length === 0 ? (
        <p>{t('types.empty')}</p>
      ) : (
        <ul class="catalogue">
          {types.map((type) => (
            <li key={type.name}>
              <h2>
                <code>{type.name}</code>{' '}
                <Badge tone={type.source === 'project' ? 'ok' : 'muted'}>{t(`types.${type.source}`)}</Badge>
              </h2>
              <p>{type.description}</p>
              <p class="hint">{t('types.subscribers', { count: type.subscribers })}</p>
              {type.schema && (
                <details>
                  <summary>{t('types.schema')}</summary>
                  <pre class="payload wrap">{JSON.stringify(type.schema, null, 2)}</pre>
                </details>
              )}
              {type.example && (
                <details>
                  <summary>{t('types.example')}</summary>
                  <pre class="payload wrap">{JSON.stringify(type.example, null, 2)}</pre>
                </details>
              )}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
