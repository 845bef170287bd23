// Adding an endpoint: a button under the list that opens the form (where it sends: a webhook's URL, a
// broker's URL and place, or a feed to poll; the types it takes, picked from the catalogue; what the
// receiver is called and carries), as webhook portals do; the form closes again without a trace when
// cancelled.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, newKey, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { navigate } from '../router.ts';
import { AuthFields, authBody } from './auth-fields.tsx';
import { Failure } from './common.tsx';
import { fieldError, ReceiverFields, receiverBody, receiverErrors, UrlField } from './receiver-fields.tsx';
import { type Kind, KindField, TargetFields, targetError, targetOf } from './target-fields.tsx';
import { TypePicker } from './type-picker.tsx';

/** Secrets just shown by the API, for the endpoint's screen to show once. */
export const freshSecrets = new Map<string, string>();

export function CreateEndpoint() {
  const { t } = useLocale();
  const [open, setOpen] = useState(false);
  if (!open) {
    return (
      <div class="actions">
        <button type="button" onClick={() => setOpen(true)}>
          {t('create.title')}
        </button>
      </div>
    );
  }
  return <CreateForm onCancel={() => setOpen(false)} />;
}

function CreateForm({ onCancel }: { onCancel: () => void }) {
  const { t } = useLocale();
  const [pending, setPending] = useState(false);
  const [failure, setFailure] = useState<unknown>();
  const [linesInvalid, setLinesInvalid] = useState(false);
  const [notJson, setNotJson] = useState(false);
  const [types, setTypes] = useState<string[]>(['*']);
  const [kind, setKind] = useState<Kind>('webhook');
  const [missing, setMissing] = useState<string[]>([]);
  // One key per intended creation: a second click, or the same form sent again after a lost answer,
  // replays the first; an answer that refuses the values makes the next submission a new one.
  const key = useRef(newKey());
  const heading = useRef<HTMLHeadingElement>(null);
  // Opened: the keyboard is at the form. Before the browser paints, so a key pressed at once after the
  // button lands in the form (after a paint, the move could come between two keys and take the second).
  useLayoutEffect(() => heading.current?.focus(), []);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    if (pending) return;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const { body, headersInvalid, filterInvalid } = receiverBody(form, true);
    setLinesInvalid(headersInvalid);
    setNotJson(filterInvalid);
    const place = kind === 'webhook' ? undefined : targetOf(kind, form);
    setMissing(place?.missing ?? []);
    if (headersInvalid || filterInvalid || place?.missing.length) return;
    setPending(true);
    setFailure(undefined);
    try {
      const created = await (kind === 'webhook'
        ? call<Schemas['WebhookEndpointCreated']>('POST', '/core/v1/webhook-endpoints', {
            body: { url: String(form.get('url') ?? ''), eventTypes: types, ...body, ...authBody(form) },
            idempotencyKey: key.current,
          })
        : call<Schemas['DestinationCreated']>('POST', '/core/v1/destinations', {
            body: { type: kind, target: place?.target, eventTypes: types, ...body },
            idempotencyKey: key.current,
          }));
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
  const { headersError, nameError, filterError, authError, tlsError, any } = receiverErrors(t, failure, {
    linesInvalid,
    notJson,
  });
  const placed = urlError || typesError || targetError(failure) || any;
  return (
    <section aria-labelledby="create-title">
      <h2 id="create-title" tabIndex={-1} ref={heading}>
        {t('create.title')}
      </h2>
      <form onSubmit={submit} noValidate>
        <KindField
          value={kind}
          onChange={(next) => {
            setKind(next);
            setFailure(undefined);
            setMissing([]);
            key.current = newKey(); // another destination, so another creation
          }}
        />
        {kind === 'webhook' ? (
          <UrlField id="url" error={urlError} hint={t('create.urlHint')} />
        ) : (
          <TargetFields kind={kind} failure={failure} missing={missing} />
        )}
        <TypePicker value={types} onChange={setTypes} describedBy={typesError ? 'types-error' : undefined} />
        {typesError && (
          <p id="types-error" class="field-error">
            {typesError}
          </p>
        )}
        <ReceiverFields headersError={headersError} nameError={nameError} filterError={filterError} />
        {kind === 'webhook' && <AuthFields authError={authError} tlsError={tlsError} />}
        {!placed && <Failure error={failure} />}
        <div class="actions">
          <button type="submit" disabled={pending}>
            {t('create.submit')}
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            {t('endpoints.cancel')}
          </button>
        </div>
      </form>
    </section>
  );
}
