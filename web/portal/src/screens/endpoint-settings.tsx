// An endpoint's settings (its URL, the types it takes, its rate, its name, description and headers) saved
// as one merge patch, and deleting
// it behind a confirmation whose focus starts on the choice that changes nothing.
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, type Endpoint } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { navigate } from '../router.ts';
import { AuthFields, authBody } from './auth-fields.tsx';
import { Failure, labelOf, useActionKeys } from './common.tsx';
import { fieldError, ReceiverFields, receiverBody, receiverErrors, UrlField } from './receiver-fields.tsx';
import { TypePicker } from './type-picker.tsx';

export function EndpointSettings({
  endpoint,
  onSaved,
}: {
  endpoint: Endpoint;
  onSaved: (e: Endpoint) => void;
}) {
  const { t } = useLocale();
  const [failure, setFailure] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [types, setTypes] = useState(endpoint.eventTypes);
  const [linesInvalid, setLinesInvalid] = useState(false);
  const [notJson, setNotJson] = useState(false);
  const keys = useActionKeys();
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const element = event.currentTarget as HTMLFormElement;
    const form = new FormData(element);
    const rate = String(form.get('rate') ?? '').trim();
    const receiver = receiverBody(form, false);
    setLinesInvalid(receiver.headersInvalid);
    setNotJson(receiver.filterInvalid);
    if (receiver.headersInvalid || receiver.filterInvalid) return;
    const body = {
      // A webhook's URL is its target's; a broker's target is changed through the API.
      ...(endpoint.type === 'webhook' ? { target: { url: String(form.get('url') ?? '').trim() } } : {}),
      eventTypes: types,
      rateLimitPerSecond: rate === '' ? null : Number(rate),
      ...receiver.body,
      ...authBody(form),
    };
    setSaved(false);
    setFailure(undefined);
    const idempotencyKey = keys.of(JSON.stringify(body));
    try {
      onSaved(
        await call<Endpoint>('PATCH', `/core/v1/destinations/${endpoint.id}`, { body, idempotencyKey }),
      );
      keys.settle(JSON.stringify(body));
      // The header lines and the secrets were applied: their values are not shown again.
      for (const name of [
        'headers',
        'client-secret',
        'private-key',
        'certificate',
        'token-url',
        'client-id',
      ]) {
        const input = element.elements.namedItem(name);
        if (input instanceof HTMLTextAreaElement || input instanceof HTMLInputElement) input.value = '';
      }
      setSaved(true);
    } catch (error) {
      keys.settle(JSON.stringify(body), error);
      setFailure(error);
    }
  };
  const urlError = fieldError(failure, '/target/url');
  const rateError = fieldError(failure, '/rateLimitPerSecond');
  const { headersError, nameError, filterError, authError, tlsError, any } = receiverErrors(t, failure, {
    linesInvalid,
    notJson,
  });
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">{t('settings.title')}</h2>
      <form onSubmit={submit} noValidate>
        {endpoint.type === 'webhook' && (
          <UrlField id="endpoint-url" error={urlError} defaultValue={endpoint.target.url} />
        )}
        <TypePicker value={types} onChange={setTypes} />
        <label for="rate">{t('endpoint.rate')}</label>
        <input
          id="rate"
          name="rate"
          inputMode="numeric"
          placeholder={t('endpoint.rateNone')}
          defaultValue={endpoint.rateLimitPerSecond?.toString() ?? ''}
          aria-invalid={rateError ? 'true' : undefined}
        />
        {rateError && <p class="field-error">{rateError}</p>}
        <ReceiverFields
          endpoint={endpoint}
          headersError={headersError}
          nameError={nameError}
          filterError={filterError}
        />
        <AuthFields endpoint={endpoint} authError={authError} tlsError={tlsError} />
        {!urlError && !rateError && !any && <Failure error={failure} />}
        <div class="actions">
          <button type="submit" class="secondary">
            {t('settings.save')}
          </button>
          {saved && <span role="status">{t('endpoint.saved')}</span>}
        </div>
      </form>
    </section>
  );
}

export function DeleteEndpoint({ endpoint }: { endpoint: Endpoint }) {
  const { t } = useLocale();
  const [open, setOpen] = useState(false);
  return (
    <section aria-labelledby="danger-title" class="danger-zone">
      <h2 id="danger-title">{t('endpoints.delete')}</h2>
      <p>{t('endpoints.deleteConfirm', { url: labelOf(t, endpoint) })}</p>
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        {t('endpoints.delete')}…
      </button>
      {open && <ConfirmDelete endpoint={endpoint} onClose={() => setOpen(false)} />}
    </section>
  );
}

function ConfirmDelete({ endpoint, onClose }: { endpoint: Endpoint; onClose: () => void }) {
  const { t } = useLocale();
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const [failure, setFailure] = useState<unknown>();
  const keys = useActionKeys();
  useEffect(() => {
    dialog.current?.showModal();
    cancel.current?.focus();
  }, []);
  const remove = () =>
    call('DELETE', `/core/v1/destinations/${endpoint.id}`, { idempotencyKey: keys.of('delete') }).then(
      () => navigate('/portal/'),
      (error) => {
        keys.settle('delete', error);
        setFailure(error);
      },
    );
  return (
    <dialog ref={dialog} aria-labelledby="delete-title" onClose={onClose}>
      <h2 id="delete-title">{t('endpoints.delete')}</h2>
      <p>{t('endpoints.deleteConfirm', { url: labelOf(t, endpoint) })}</p>
      <Failure error={failure} />
      <div class="actions">
        <button type="button" class="danger" onClick={remove}>
          {t('endpoints.delete')}
        </button>
        <button ref={cancel} type="button" class="secondary" onClick={onClose}>
          {t('endpoints.cancel')}
        </button>
      </div>
    </dialog>
  );
}
