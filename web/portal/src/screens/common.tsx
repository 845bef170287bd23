// What the screens share: an endpoint's state in words, and a failure shown with its request id.
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
