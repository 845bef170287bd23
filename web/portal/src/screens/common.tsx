// What the screens share: a state as a badge (colour and words), a failure shown with its request id, the
// head of a table of deliveries, and a one-time idempotency key per intended action.
import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';
import { ApiError, type Endpoint, newKey } from '../api.ts';
import type { Tone } from '../colours.ts';
import { type MessageKey, useLocale } from '../i18n/index.ts';

export const stateOf = (endpoint: Pick<Endpoint, 'active' | 'paused'>): MessageKey =>
  !endpoint.active ? 'endpoints.disabled' : endpoint.paused ? 'endpoints.paused' : 'endpoints.active';

const ENDPOINT_TONES: Record<string, Tone> = {
  'endpoints.active': 'ok',
  'endpoints.paused': 'warn',
  'endpoints.disabled': 'bad',
};
const DELIVERY_TONES: Record<string, Tone> = {
  delivered: 'ok',
  pending: 'warn',
  dead: 'bad',
  cancelled: 'muted',
};

export const DELIVERY_STATES = ['pending', 'delivered', 'dead', 'cancelled'] as const;

/** A choice of a delivery state, "any" first. */
export function StateSelect({ id, name = 'state' }: { id: string; name?: string }) {
  const { t } = useLocale();
  return (
    <select id={id} name={name}>
      <option value="">{t('log.any')}</option>
      {DELIVERY_STATES.map((state) => (
        <option key={state} value={state}>
          {t(`state.${state}`)}
        </option>
      ))}
    </select>
  );
}

/** A state in colour and in words (the words carry it alone for those who do not see the colour). */
export function Badge({ tone, children }: { tone: Tone; children: ComponentChildren }) {
  return (
    <span class="badge" data-tone={tone}>
      {children}
    </span>
  );
}

/** Where a destination sends, as its developers read it: a URL, a broker's place, or its feed. */
export function whereOf(t: (key: MessageKey) => string, endpoint: Pick<Endpoint, 'type' | 'target'>) {
  const { url = '', exchange, routingKey, stream, subject } = endpoint.target;
  const place = [exchange, routingKey].filter((x) => x !== undefined).join(' → ') || stream || subject;
  if (endpoint.type === 'webhook') return url;
  if (endpoint.type === 'polling') return t('destination.polling');
  return `${t(`destination.${endpoint.type}` as MessageKey)} · ${place} · ${url}`;
}

/** What the portal calls a destination: its name, else where it sends. */
export const labelOf = (
  t: (key: MessageKey) => string,
  endpoint: Pick<Endpoint, 'name' | 'type' | 'target'>,
) => endpoint.name ?? whereOf(t, endpoint);

export function EndpointBadge({ endpoint }: { endpoint: Pick<Endpoint, 'active' | 'paused'> }) {
  const { t } = useLocale();
  const state = stateOf(endpoint);
  return <Badge tone={ENDPOINT_TONES[state] ?? 'muted'}>{t(state)}</Badge>;
}

/** A delivery's state; with a count, how many deliveries are in it. */
export function DeliveryBadge({ state, count }: { state: string; count?: string }) {
  const { t } = useLocale();
  const words = t(`state.${state}` as MessageKey);
  return (
    <Badge tone={DELIVERY_TONES[state] ?? 'muted'}>{count === undefined ? words : `${count} ${words}`}</Badge>
  );
}

export function Failure({ error }: { error: unknown }) {
  const { t } = useLocale();
  if (!error) return null;
  const problem = error instanceof ApiError ? error.problem : {};
  return (
    <p role="alert" class="failure">
      {problem.detail ? `${problem.detail}. ` : ''}
      {t('error.generic', { code: problem.code ?? 'NETWORK', requestId: problem.requestId ?? '-' })}
    </p>
  );
}

/** The head of a table of deliveries; its first column names what each row is of (an event, an endpoint). */
export function DeliveriesHead({ first }: { first: string }) {
  const { t } = useLocale();
  return (
    <thead>
      <tr>
        <th scope="col">{first}</th>
        <th scope="col">{t('log.state')}</th>
        <th scope="col">{t('log.status')}</th>
        <th scope="col">{t('log.attempts')}</th>
        <th scope="col">{t('log.created')}</th>
      </tr>
    </thead>
  );
}

/**
 * Idempotency keys of intended actions, one per action name, kept until the action is answered: a retry
 * after a lost answer repeats the same action rather than making a second one. A refusal is an answer (and
 * recorded under the key), so the next click is a new attempt; no answer, a 5xx, a 409 (still running) or
 * a 429 keep the key.
 */
export function useActionKeys() {
  const keys = useRef(new Map<string, string>());
  return {
    of(action: string): string {
      const key = keys.current.get(action) ?? newKey();
      keys.current.set(action, key);
      return key;
    },
    settle(action: string, error?: unknown) {
      if (!error || (error instanceof ApiError && error.status < 500 && ![409, 429].includes(error.status)))
        keys.current.delete(action);
    },
  };
}
