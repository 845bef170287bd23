// The portal's frame: the project's name and theme, the navigation, the language (one of the project's),
// and the screen of the path.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, type Session, useSession } from './api.ts';
import { LocaleContext, localeOf } from './i18n/index.ts';
import { follow, usePath } from './router.ts';
import { EndpointScreen } from './screens/endpoint.tsx';
import { EndpointsScreen } from './screens/endpoints.tsx';
import { EventScreen } from './screens/event.tsx';
import { EventTypesScreen } from './screens/event-types.tsx';
import { EventsScreen } from './screens/events.tsx';
import { UsageScreen } from './screens/usage.tsx';
import { applyTheme } from './theme.ts';

export function App({ session, onExpired }: { session: Session; onExpired: () => void }) {
  useSession(session, onExpired);
  const { project } = session;
  const [language, setLanguage] = useState(sessionStorage.getItem('portal-language') ?? session.language);
  const locale = useMemo(() => localeOf(language), [language]);
  const path = usePath();
  const [logoFailed, setLogoFailed] = useState(false);
  useEffect(() => applyTheme(project.theme), [project]);
  useEffect(() => {
    document.documentElement.lang = language;
    document.title = `${project.name} · ${locale.t('app.title')}`;
  }, [language, locale, project]);
  const choose = (next: string) => {
    sessionStorage.setItem('portal-language', next);
    setLanguage(next);
  };
  const { t } = locale;
  const endpoint = /^\/portal\/endpoints\/([0-9a-f-]{36})$/.exec(path)?.[1];
  const event = /^\/portal\/events\/([0-9a-f-]{36})$/.exec(path)?.[1];
  const usage = path === '/portal/usage';
  const types = path === '/portal/event-types';
  const events = path === '/portal/events';
  const screen = endpoint ? (
    <EndpointScreen id={endpoint} />
  ) : event ? (
    <EventScreen id={event} />
  ) : usage ? (
    <UsageScreen />
  ) : types ? (
    <EventTypesScreen />
  ) : events ? (
    <EventsScreen />
  ) : (
    <EndpointsScreen />
  );
  return (
    <LocaleContext.Provider value={locale}>
      <header class="bar">
        <span class="project">
          {project.theme.logoUrl && !logoFailed && (
            <img src="/portal/logo" alt="" class="logo" onError={() => setLogoFailed(true)} />
          )}
          {project.name}
        </span>
        <nav aria-label={t('app.title')}>
          <a
            href="/portal/"
            aria-current={usage || types || events || event ? undefined : 'page'}
            onClick={(e) => follow(e, '/portal/')}
          >
            {t('nav.endpoints')}
          </a>
          <a
            href="/portal/events"
            aria-current={events || event ? 'page' : undefined}
            onClick={(e) => follow(e, '/portal/events')}
          >
            {t('nav.events')}
          </a>
          <a
            href="/portal/event-types"
            aria-current={types ? 'page' : undefined}
            onClick={(e) => follow(e, '/portal/event-types')}
          >
            {t('nav.types')}
          </a>
          {session.scopes.includes('usage:read') && (
            <a
              href="/portal/usage"
              aria-current={usage ? 'page' : undefined}
              onClick={(e) => follow(e, '/portal/usage')}
            >
              {t('nav.usage')}
            </a>
          )}
        </nav>
        <label class="language">
          {t('nav.language')}
          <select value={language} onChange={(e) => choose(e.currentTarget.value)}>
            {project.languages.map((tag) => (
              <option key={tag} value={tag}>
                {new Intl.DisplayNames([tag], { type: 'language' }).of(tag) ?? tag}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          class="secondary"
          onClick={() => call('DELETE', '/portal/session').then(onExpired, onExpired)}
        >
          {t('nav.signOut')}
        </button>
      </header>
      <main>{screen}</main>
    </LocaleContext.Provider>
  );
}
