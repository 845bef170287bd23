// One endpoint: its state, its secret (shown once, at creation and rotation), the actions on it, its
// settings, "send again since…", its delivery log, and deleting it.
import { useEffect, useState } from 'preact/hooks';
import { call, type Endpoint, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { follow } from '../router.ts';
import { EndpointBadge, Failure, labelOf, useActionKeys, whereOf } from './common.tsx';
import { DeliveryLog } from './delivery-log.tsx';
import { freshSecrets } from './endpoint-create.tsx';
import { DeleteEndpoint, EndpointSettings } from './endpoint-settings.tsx';
import { EndpointStats } from './endpoint-stats.tsx';
import { FeedMessages } from './feed.tsx';
import { Recover } from './recover.tsx';
import { SendExample } from './send-example.tsx';

export function EndpointScreen({ id }: { id: string }) {
  const { t } = useLocale();
  const [endpoint, setEndpoint] = useState<Endpoint>();
  const [secret, setSecret] = useState(() => freshSecrets.get(id));
  const [notice, setNotice] = useState<string>();
  const [failure, setFailure] = useState<unknown>();
  const [pending, setPending] = useState(false);
  const path = `/core/v1/destinations/${id}`;
  const keys = useActionKeys();
  useEffect(() => {
    freshSecrets.delete(id);
    call<Endpoint>('GET', path).then(setEndpoint, setFailure);
  }, [id]);

  const act = async (
    action: string,
    send: (idempotencyKey: string) => Promise<unknown>,
    done?: (a: unknown) => void,
  ) => {
    setPending(true);
    setFailure(undefined);
    setNotice(undefined);
    try {
      const answer = await send(keys.of(action));
      keys.settle(action);
      done?.(answer);
      setEndpoint(await call<Endpoint>('GET', path));
    } catch (error) {
      keys.settle(action, error);
      setFailure(error);
    } finally {
      setPending(false);
    }
  };
  const post = (action: string, done?: (answer: unknown) => void) =>
    act(action, (idempotencyKey) => call('POST', `${path}/${action}`, { idempotencyKey }), done);
  if (!endpoint) return failure ? <Failure error={failure} /> : <p>{t('loading')}</p>;
  return (
    <>
      <p>
        <a href="/portal/" onClick={(e) => follow(e, '/portal/')}>
          ← {t('endpoint.back')}
        </a>
      </p>
      <h1 tabIndex={-1}>{labelOf(t, endpoint)}</h1>
      {endpoint.name && <p class="under">{whereOf(t, endpoint)}</p>}
      {endpoint.description && <p>{endpoint.description}</p>}
      <p class="state">
        <EndpointBadge endpoint={endpoint} />
        {!endpoint.active && <span> {t('endpoint.disabledWhy')}</span>}
      </p>
      {secret && <Secret value={secret} />}
      <div class="actions" aria-live="polite">
        {!endpoint.active && (
          <button
            type="button"
            disabled={pending}
            onClick={() =>
              act('enable', (idempotencyKey) =>
                call('PATCH', path, { body: { active: true }, idempotencyKey }),
              )
            }
          >
            {t('endpoint.enable')}
          </button>
        )}
        <button
          type="button"
          disabled={pending}
          onClick={() =>
            post('rotate-secret', (a) => setSecret((a as Schemas['WebhookSecretRotated']).secret))
          }
        >
          {t('endpoint.rotate')}
        </button>
        {endpoint.hasPreviousSecret && (
          <button
            type="button"
            class="secondary"
            disabled={pending}
            onClick={() => post('retire-previous-secret')}
          >
            {t('endpoint.retire')}
          </button>
        )}
        <button
          type="button"
          class="secondary"
          disabled={pending}
          onClick={() => post(endpoint.paused ? 'resume' : 'pause')}
        >
          {t(endpoint.paused ? 'endpoint.resume' : 'endpoint.pause')}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={pending}
          onClick={() => post('test', () => setNotice(t('endpoint.testSent')))}
        >
          {t('endpoint.test')}
        </button>
      </div>
      {notice && <p role="status">{notice}</p>}
      <Failure error={failure} />
      <EndpointStats endpointId={id} />
      {endpoint.type === 'polling' && <FeedMessages destinationId={id} />}
      <DeliveryLog endpointId={id} />
      <SendExample endpointId={id} />
      <Recover endpointId={id} />
      <EndpointSettings endpoint={endpoint} onSaved={setEndpoint} />
      <DeleteEndpoint endpoint={endpoint} />
    </>
  );
}

function Secret({ value }: { value: string }) {
  const { t } = useLocale();
  const [copied, setCopied] = useState(false);
  return (
    <section class="secret" aria-labelledby="secret-title">
      <h2 id="secret-title">{t('secret.title')}</h2>
      <p>{t('secret.once')}</p>
      <code data-testid="secret">{value}</code>{' '}
      <button type="button" onClick={() => navigator.clipboard.writeText(value).then(() => setCopied(true))}>
        {copied ? t('secret.copied') : t('secret.copy')}
      </button>
    </section>
  );
}
