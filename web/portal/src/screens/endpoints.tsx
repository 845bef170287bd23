// The endpoints of the project: each with its state, and the forms to add one and delete one.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, type Endpoint, newKey, type Schemas } from '../api.ts';

type Listed = Schemas['WebhookEndpointList']['data'][number];

import { useLocale } from '../i18n/index.ts';
import { follow, navigate } from '../router.ts';
import { Failure, stateOf } from './common.tsx';

/** Secrets just shown by the API, for the endpoint's screen to show once. */
export const freshSecrets = new Map<string, string>();

export function EndpointsScreen() {
  const { t, number, percent } = useLocale();
  const [endpoints, setEndpoints] = useState<Listed[]>();
  const [failure, setFailure] = useState<unknown>();
  const [deleting, setDeleting] = useState<Endpoint>();
  const load = () =>
    call<Schemas['WebhookEndpointList']>('GET', '/core/v1/webhook-endpoints').then(
      (r) => setEndpoints(r.data),
      setFailure,
    );
  useEffect(() => void load(), []);

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
              <th scope="col">
                <span class="visually-hidden">{t('endpoints.delete')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id}>
                <td>
                  <a
                    href={`/portal/endpoints/${endpoint.id}`}
                    onClick={(e) => follow(e, `/portal/endpoints/${endpoint.id}`)}
                  >
                    {endpoint.url}
                  </a>
                </td>
                <td>{t(stateOf(endpoint))}</td>
                <td>{endpoint.eventTypes.join(', ')}</td>
                <td>
                  {endpoint.last24h.attempts === 0
                    ? '—'
                    : percent(endpoint.last24h.succeeded / endpoint.last24h.attempts)}
                </td>
                <td>{number(endpoint.waiting)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`${t('endpoints.delete')} ${endpoint.url}`}
                    onClick={() => setDeleting(endpoint)}
                  >
                    {t('endpoints.delete')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {deleting && (
        <ConfirmDelete
          endpoint={deleting}
          onClose={(deleted) => {
            setDeleting(undefined);
            if (deleted) void load();
          }}
        />
      )}
      <CreateEndpoint />
    </>
  );
}

function ConfirmDelete({ endpoint, onClose }: { endpoint: Endpoint; onClose: (deleted: boolean) => void }) {
  const { t } = useLocale();
  const dialog = useRef<HTMLDialogElement>(null);
  const [failure, setFailure] = useState<unknown>();
  const [key] = useState(() => newKey());
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
    cancel.current?.focus(); // focus starts on the choice that changes nothing
  }, []);
  const remove = () =>
    call('DELETE', `/core/v1/webhook-endpoints/${endpoint.id}`, { idempotencyKey: key }).then(
      () => onClose(true),
      setFailure,
    );
  return (
    <dialog ref={dialog} aria-labelledby="delete-title" onClose={() => onClose(false)}>
      <h2 id="delete-title">{t('endpoints.delete')}</h2>
      <p>{t('endpoints.deleteConfirm', { url: endpoint.url })}</p>
      <Failure error={failure} />
      <div class="actions">
        <button type="button" class="danger" onClick={remove}>
          {t('endpoints.delete')}
        </button>
        <button ref={cancel} type="button" class="secondary" onClick={() => onClose(false)}>
          {t('endpoints.cancel')}
        </button>
      </div>
    </dialog>
  );
}

function CreateEndpoint() {
  const { t } = useLocale();
  const [pending, setPending] = useState(false);
  const [failure, setFailure] = useState<unknown>();
  // One key per intended creation: a second click, or the same form sent again after a lost answer,
  // replays the first; an answer that refuses the values makes the next submission a new one.
  const key = useRef(newKey());
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (pending) return;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const eventTypes = String(form.get('eventTypes') ?? '')
      .split(',')
      .map((type) => type.trim())
      .filter(Boolean);
    setPending(true);
    setFailure(undefined);
    try {
      const created = await call<Schemas['WebhookEndpointCreated']>('POST', '/core/v1/webhook-endpoints', {
        body: { url: String(form.get('url') ?? ''), eventTypes },
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
  const fieldError = (pointer: string) =>
    failure instanceof ApiError
      ? failure.problem.errors?.find((e) => e.pointer?.startsWith(pointer))?.detail
      : undefined;
  const urlError = fieldError('/url');
  const typesError = fieldError('/eventTypes');
  return (
    <section aria-labelledby="create-title">
      <h2 id="create-title">{t('create.title')}</h2>
      <form onSubmit={submit} noValidate>
        <label for="url">{t('create.url')}</label>
        <input
          id="url"
          name="url"
          type="url"
          required
          aria-invalid={urlError ? 'true' : undefined}
          aria-describedby={urlError ? 'url-hint url-error' : 'url-hint'}
        />
        <p id="url-hint" class="hint">
          {t('create.urlHint')}
        </p>
        {urlError && (
          <p id="url-error" class="field-error">
            {urlError}
          </p>
        )}
        <label for="eventTypes">{t('create.types')}</label>
        <input
          id="eventTypes"
          name="eventTypes"
          defaultValue="*"
          aria-invalid={typesError ? 'true' : undefined}
          aria-describedby={typesError ? 'types-hint types-error' : 'types-hint'}
        />
        <p id="types-hint" class="hint">
          {t('create.typesHint')}
        </p>
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
