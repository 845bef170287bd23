// Picking the event types an endpoint takes: the catalogue's types as checkboxes (the project's and the
// platform's, each with its description), and a field for anything else (a prefix pattern such as pay.*,
// or a type not declared yet). "All types" is the pattern *.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { useLocale } from '../i18n/index.ts';

/** The platform's own types, described in the portal's language and in words (not routes). */
const PLATFORM_WORDS: Record<string, MessageKey> = {
  'core.endpoint.disabled': 'core.endpoint.disabled',
  'core.endpoint.paused': 'core.endpoint.paused',
  'core.endpoint.resumed': 'core.endpoint.resumed',
  'core.delivery.dead': 'core.delivery.dead',
  'core.erasure.failed': 'core.erasure.failed',
  'core.webhook.test': 'core.webhook.test',
};

/** A type's description as a project's developer reads it. */
export function describeType(
  t: (key: MessageKey) => string,
  type: Pick<Schemas['EventType'], 'name' | 'description'>,
) {
  const words = PLATFORM_WORDS[type.name];
  return words ? t(words) : type.description;
}

type EventType = Schemas['EventType'];

let catalogue: Promise<EventType[]> | undefined;
/** The project's catalogue, read once per page (a type declared meanwhile shows after a reload). */
export const eventTypes = () => {
  catalogue ??= call<Schemas['EventTypeList']>('GET', '/core/v1/event-types').then(
    (list) => list.data,
    (error) => {
      catalogue = undefined;
      throw error;
    },
  );
  return catalogue;
};

export function TypePicker({
  value,
  onChange,
  describedBy,
}: {
  value: string[];
  onChange: (types: string[]) => void;
  describedBy?: string;
}) {
  const { t } = useLocale();
  const [types, setTypes] = useState<EventType[]>([]);
  // The project's own types first, then the platform's.
  useEffect(
    () =>
      void eventTypes().then(
        (all) =>
          setTypes([...all].sort((a, b) => (a.source === b.source ? 0 : a.source === 'project' ? -1 : 1))),
        () => setTypes([]),
      ),
    [],
  );
  const listed = new Set(types.map((type) => type.name));
  const all = value.includes('*');
  const others = value.filter((type) => type !== '*' && !listed.has(type));
  const toggle = (name: string, on: boolean) =>
    onChange(on ? [...value.filter((type) => type !== name), name] : value.filter((type) => type !== name));
  return (
    <fieldset class="types" aria-describedby={describedBy}>
      <legend>{t('create.types')}</legend>
      <label class="check">
        <input type="checkbox" checked={all} onChange={(e) => toggle('*', e.currentTarget.checked)} />
        {t('types.all')}
      </label>
      {types.map((type) => (
        <label class="check" key={type.name}>
          <input
            type="checkbox"
            name="type"
            value={type.name}
            disabled={all && !type.name.startsWith('core.')}
            checked={value.includes(type.name)}
            onChange={(e) => toggle(type.name, e.currentTarget.checked)}
          />
          <code>{type.name}</code> <span class="hint">{describeType(t, type)}</span>
        </label>
      ))}
      <label for="other-types">{t('types.other')}</label>
      <input
        id="other-types"
        // Not controlled: a render meanwhile (the catalogue arriving, a box ticked) would put an older text
        // back over what is being typed. The words are read on every keystroke instead.
        defaultValue={others.join(', ')}
        placeholder="pay.*"
        onInput={(e) => {
          const typed = e.currentTarget.value
            .split(',')
            .map((type) => type.trim())
            .filter(Boolean);
          onChange([...new Set([...value.filter((type) => type === '*' || listed.has(type)), ...typed])]);
        }}
      />
    </fieldset>
  );
}
