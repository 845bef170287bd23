// What the screens share: an endpoint's state in words, a failure shown with its request id, and the head
// of a table of deliveries.
import { ApiError, type Endpoint } from '../api.ts';
import { useLocale } from '../i18n/index.ts';

export const stateOf = (endpoint: Endpoint) =>
  !endpoint.active ? 'endpoints.disabled' : endpoint.paused ? 'endpoints.paused' : 'endpoints.active';

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
