// The event-type catalogue: the project's types and the platform's, grouped by their first word and
// searched by name or words, each with its description (the platform's in the portal's language), how
// many endpoints take it, an example of its data and its JSON Schema.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { Badge, Failure } from './common.tsx';
import { SendTypeExample } from './type-example.tsx';
import { describeType, eventTypes } from './type-picker.tsx';

type EventType = Schemas['EventType'];
type Listed = Schemas['DestinationList']['data'][number];

/** The types by their first word (pay, shop, core): the project's groups first, the platform's last. */
function grouped(types: EventType[]) {
  const groups = new Map<string, EventType[]>();
  for (const type of types) {
    const prefix = type.name.split('.')[0] ?? type.name;
    groups.set(prefix, [...(groups.get(prefix) ?? []), type]);
  }
  return [...groups].sort(([a], [b]) => Number(a === 'core') - Number(b === 'core'));
}

export function EventTypesScreen() {
  const { t } = useLocale();
  const [types, setTypes] = useState<EventType[]>();
  const [failure, setFailure] = useState<unknown>();
  const [query, setQuery] = useState('');
  const [endpoints, setEndpoints] = useState<Listed[]>([]);
  useEffect(() => void eventTypes().then(setTypes, setFailure), []);
  useEffect(
    () =>
      void call<Schemas['DestinationList']>('GET', '/core/v1/destinations').then(
        (r) => setEndpoints(r.data),
        () => {}, // the catalogue reads without them; only "send an example" needs them
      ),
    [],
  );
  const words = query.trim().toLowerCase();
  const shown = types?.filter(
    (type) => !words || `${type.name} ${describeType(t, type)}`.toLowerCase().includes(words),
  );
  return (
    <>
      <h1 tabIndex={-1}>{t('types.title')}</h1>
      <p>{t('types.intro')}</p>
      <search>
        <label for="types-search">{t('types.search')}</label>
        <input
          id="types-search"
          type="search"
          value={query}
          onInput={(event) => setQuery(event.currentTarget.value)}
        />
      </search>
      <Failure error={failure} />
      {shown === undefined ? (
        failure ? null : (
          <p>{t('loading')}</p>
        )
      ) : shown.length === 0 ? (
        <p>{t(types?.length ? 'types.none' : 'types.empty')}</p>
      ) : (
        grouped(shown).map(([prefix, members]) => (
          <section key={prefix} aria-labelledby={`group-${prefix}`}>
            <h2 id={`group-${prefix}`}>
              <code>{prefix}.*</code>
            </h2>
            <ul class="catalogue">
              {members.map((type) => (
                <TypeEntry key={type.name} type={type} endpoints={endpoints} />
              ))}
            </ul>
          </section>
        ))
      )}
    </>
  );
}

function TypeEntry({ type, endpoints }: { type: EventType; endpoints: Listed[] }) {
  const { t } = useLocale();
  return (
    <li>
      <h3>
        <code>{type.name}</code>{' '}
        <Badge tone={type.source === 'project' ? 'ok' : 'muted'}>{t(`types.${type.source}`)}</Badge>
      </h3>
      <p>{describeType(t, type)}</p>
      <p class="hint">{t('types.subscribers', { count: type.subscribers })}</p>
      {type.example && (
        <>
          <p class="hint">{t('types.example')}</p>
          <pre class="payload wrap">{JSON.stringify(type.example, null, 2)}</pre>
          <SendTypeExample type={type.name} endpoints={endpoints} />
        </>
      )}
      {type.schema && (
        <details>
          <summary>{t('types.schema')}</summary>
          <pre class="payload wrap">{JSON.stringify(type.schema, null, 2)}</pre>
        </details>
      )}
    </li>
  );
}
