// Where a new destination sends (contract 0.4): a webhook's HTTPS URL, a broker's URL and place (a RabbitMQ
// exchange and routing key, a Redis stream, a NATS subject), or a feed to poll, which dials nothing. The
// broker's password goes in its URL, is kept sealed and is never shown again.
import type { Schemas } from '../api.ts';
import type { MessageKey } from '../i18n/en.ts';
import { useLocale } from '../i18n/index.ts';
import { fieldError, TextField } from './receiver-fields.tsx';

export type Kind = Schemas['Destination']['type'];
export const KINDS: Kind[] = ['webhook', 'rabbitmq', 'redis', 'nats', 'polling'];

/** The place fields each broker names, after its URL: [field, required]. */
const PLACES: Record<Kind, [string, boolean][]> = {
  webhook: [],
  rabbitmq: [
    ['exchange', true],
    ['routingKey', true],
  ],
  redis: [
    ['stream', true],
    ['maxLen', false],
  ],
  nats: [['subject', true]],
  polling: [],
};

/** A broker's fields: its URL, then its place; a feed has none. */
const fieldsOf = (kind: Exclude<Kind, 'webhook'>): [string, boolean][] =>
  kind === 'polling' ? [] : [['url', true], ...PLACES[kind]];

export function KindField({ value, onChange }: { value: Kind; onChange: (kind: Kind) => void }) {
  const { t } = useLocale();
  return (
    <>
      <label for="kind">{t('create.kind')}</label>
      <select id="kind" value={value} onChange={(e) => onChange(e.currentTarget.value as Kind)}>
        {KINDS.map((kind) => (
          <option key={kind} value={kind}>
            {t(`destination.${kind}` as MessageKey)}
          </option>
        ))}
      </select>
    </>
  );
}

/**
 * A broker's URL and place, or what a feed to poll is; beside each, the form's own word for a field left
 * empty (`missing`), or else the API's refusal.
 */
export function TargetFields(props: { kind: Exclude<Kind, 'webhook'>; failure: unknown; missing: string[] }) {
  const { kind, failure, missing } = props;
  const { t } = useLocale();
  if (kind === 'polling') return <p class="hint">{t('create.pollingHint')}</p>;
  return (
    <>
      {fieldsOf(kind).map(([name, required]) => (
        <TextField
          key={`${kind}-${name}`}
          id={`target-${name}`}
          label={t(`create.target.${name}` as MessageKey)}
          name={`target-${name}`}
          type={name === 'maxLen' ? 'number' : 'text'}
          required={required}
          hint={name === 'url' ? t(`create.brokerUrlHint.${kind}` as MessageKey) : undefined}
          error={missing.includes(name) ? t('create.target.missing') : fieldError(failure, `/target/${name}`)}
        />
      ))}
    </>
  );
}

/**
 * The target the form's fields give for a broker or a feed (an empty optional field left out), and the
 * required fields left empty.
 */
export function targetOf(kind: Exclude<Kind, 'webhook'>, form: FormData) {
  const target: Record<string, string | number> = {};
  const missing: string[] = [];
  for (const [name, required] of fieldsOf(kind)) {
    const value = String(form.get(`target-${name}`) ?? '').trim();
    if (value === '') {
      if (required) missing.push(name);
      continue;
    }
    target[name] = name === 'maxLen' && /^\d+$/.test(value) ? Number(value) : value;
  }
  return { target, missing };
}

/** Whether a refusal names a target's field, so the form says nothing more below. */
export const targetError = (failure: unknown) => fieldError(failure, '/target');
