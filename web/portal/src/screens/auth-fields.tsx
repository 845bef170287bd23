// How the receiver authenticates what it is sent, in the create and settings forms: OAuth 2.0 client
// credentials and a client certificate for mutual TLS, folded away until asked for. The client secret and
// the private key are write-only: the settings form says what is set, and a new value replaces it.
import { useState } from 'preact/hooks';
import type { Endpoint } from '../api.ts';
import { useLocale } from '../i18n/index.ts';

/** The form's auth and tls members: set when filled, null when their removal is ticked, else absent. */
export function authBody(form: FormData): Record<string, unknown> {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const body: Record<string, unknown> = {};
  if (form.get('auth-remove')) body.auth = null;
  else if (text('token-url')) {
    body.auth = {
      type: 'oauth2_client_credentials',
      tokenUrl: text('token-url'),
      clientId: text('client-id'),
      clientSecret: text('client-secret'),
      ...(text('scope') && { scope: text('scope') }),
      ...(text('audience') && { audience: text('audience') }),
    };
  }
  if (form.get('tls-remove')) body.tls = null;
  else if (text('certificate'))
    body.tls = { certificate: text('certificate'), privateKey: text('private-key') };
  return body;
}

export function AuthFields(props: { endpoint?: Endpoint; authError?: string; tlsError?: string }) {
  const { t, date } = useLocale();
  const { endpoint, authError, tlsError } = props;
  // Once opened (or opened by a refusal inside), it stays open across saves.
  const [opened, setOpened] = useState(false);
  const field = (name: string, label: string, type = 'text') => (
    <>
      <label for={`auth-${name}`}>{label}</label>
      <input id={`auth-${name}`} name={name} type={type} autoComplete="off" spellcheck={false} />
    </>
  );
  return (
    <details
      class="auth"
      open={opened || Boolean(authError || tlsError)}
      onToggle={(event) => setOpened(event.currentTarget.open)}
    >
      <summary>{t('auth.title')}</summary>
      <fieldset>
        <legend>{t('auth.oauth')}</legend>
        {endpoint?.auth && (
          <p class="hint">
            {t('auth.oauthSet', { clientId: endpoint.auth.clientId, tokenUrl: endpoint.auth.tokenUrl })}
          </p>
        )}
        {field('token-url', t('auth.tokenUrl'), 'url')}
        {field('client-id', t('auth.clientId'))}
        {field('client-secret', t('auth.clientSecret'), 'password')}
        {field('scope', t('auth.scope'))}
        {field('audience', t('auth.audience'))}
        {endpoint?.auth && (
          <label class="check">
            <input type="checkbox" name="auth-remove" /> {t('auth.remove')}
          </label>
        )}
        {authError && <p class="field-error">{authError}</p>}
      </fieldset>
      <fieldset>
        <legend>{t('auth.tls')}</legend>
        {endpoint?.tls && <p class="hint">{t('auth.tlsSet', { expiresAt: date(endpoint.tls.expiresAt) })}</p>}
        <label for="auth-certificate">{t('auth.certificate')}</label>
        <textarea id="auth-certificate" name="certificate" rows={3} spellcheck={false} />
        <label for="auth-private-key">{t('auth.privateKey')}</label>
        <textarea id="auth-private-key" name="private-key" rows={3} spellcheck={false} autoComplete="off" />
        {endpoint?.tls && (
          <label class="check">
            <input type="checkbox" name="tls-remove" /> {t('auth.tlsRemove')}
          </label>
        )}
        {tlsError && <p class="field-error">{tlsError}</p>}
      </fieldset>
    </details>
  );
}
