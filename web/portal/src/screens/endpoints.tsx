// The endpoints of the project: each with its state as a badge, its success rate and what waits for it,
// and the form to add one (types picked from the catalogue). Deleting is on the endpoint's own screen,
// behind a confirmation.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, newKey, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { follow, navigate } from '../router.ts';
import { EndpointBadge, Failure } from './common.tsx';
import { TypePicker } from './type-picker.tsx';

type Listed = Schemas['WebhookEndpointList']['data'][number];

/** Secrets just shown by the API, for the endpoint's screen to show once. */
export const freshSecrets = new Map<string, string>();

export function EndpointsScreen() {
  const { t, number, percent } = useLocale();
  const [endpoints, setEndpoints] = useState<Listed[]>();
  const [failure, setFailure] = useState<unknown>();
  useEffect(
    () =>
      void call<Schemas['WebhookEndpointList']>('GET', '/core/v1/webhook-endpoints').then(
        (r) => setEndpoints(r.data),
        setFailure,
      ),
    [],
  );
  const rate = (endpoint: Listed) =>
    endpoint.last24h.attempts === 0 ? '—' : percent(endpoint.last24h.succeeded / endpoint.last24h.attempts);
  return (
    <>
      <h1 tabIndex={-1}>{t('endpoints.title')}</h1>
      <Failure error={failure} />
      {endpoints === undefined ? (
        <p>{t('loading')}</p>
      ) : endpoints.length === 0 ? (
        <p>{t('endpoints.empty')}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">{t('endpoints.url')}</th>
              <th scope="col">{t('endpoints.state')}</th>
              <th scope="col">{t('endpoints.types')}</th>
              <th scope="col">{t('endpoints.success')}</th>
              <th scope="col">{t('endpoints.waiting')}</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id} data-failing={!endpoint.active || undefined}>
                <td>
                  <a
                    href={`/portal/endpoints/${endpoint.id}`}
                    onClick={(e) => follow(e, `/portal/endpoints/${endpoint.id}`)}
                  >
                    {endpoint.url}
                  </a>
                </td>
                <td>
                  <EndpointBadge endpoint={endpoint} />
                </td>
                <td>{endpoint.eventTypes.join(', ')}</td>
                <td>{rate(endpoint)}</td>
                <td>{number(endpoint.waiting)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CreateEndpoint />
    </>
  );
}

/** An endpoint's URL: its label, its hint when given, and the API's refusal of it beside it. */
export function UrlField(props: { id: string; error?: string; hint?: string; defaultValue?: string }) {
  const { t } = useLocale();
  const { id, error, hint, defaultValue } = props;
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <>
      <label for={id}>{t('create.url')}</label>
      <input
        id={id}
        name="url"
        type="url"
        required
        defaultValue={defaultValue}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={described || undefined}
      />
      {hint && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} class="field-error">
          {error}
        </p>
      )}
    </>
  );
}

/** Which member of the body a 400 names, by JSON pointer. */
export const fieldError = (failure: unknown, pointer: string) =>
  failure instanceof ApiError
    ? failure.problem.errors?.find((e) => e.pointer?.startsWith(pointer))?.detail
    : undefined;

function CreateEndpoint() {
  const { t } = useLocale();
  const [pending, setPending] = useState(false);
  const [failure, setFailure] = useState<unknown>();
  const [types, setTypes] = useState<string[]>(['*']);
  // One key per intended creation: a second click, or the same form sent again after a lost answer,
  // replays the first; an answer that refuses the values makes the next submission a new one.
  const key = useRef(newKey());
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (pending) return;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setPending(true);
    setFailure(undefined);
    try {
      const created = await call<Schemas['WebhookEndpointCreated']>('POST', '/core/v1/webhook-endpoints', {
        body: { url: String(form.get('url') ?? ''), eventTypes: types },
        idempotencyKey: key.current,
      });
      freshSecrets.set(created.id, created.secret);
      key.current = newKey();
      navigate(`/portal/endpoints/${created.id}`);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) key.current = newKey();
      setFailure(error);
    } finally {
      setPending(false);
    }
  };
  const urlError = fieldError(failure, '/url');
  const typesError = fieldError(failure, '/eventTypes');
  return (
    <section aria-labelledby="create-title">
      <h2 id="create-title">{t('create.title')}</h2>
      <form onSubmit={submit} noValidate>
        <UrlField id="url" error={urlError} hint={t('create.urlHint')} />
        <TypePicker value={types} onChange={setTypes} describedBy={typesError ? 'types-error' : undefined} />
        {typesError && (
          <p id="types-error" class="field-error">
            {typesError}
          </p>
        )}
        {!urlError && !typesError && <Failure error={failure} />}
        <button type="submit" disabled={pending}>
          {t('create.submit')}
        </button>
      </form>
    </section>
  );
}
