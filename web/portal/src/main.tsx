// The portal's start: a link's code (in the fragment, at /portal/enter) is traded for the session cookie
// and removed from the address bar at once; otherwise the cookie's session is read. Without a session,
// the sign-in-expired page, never a half-rendered app.
import { render } from 'preact';
import { openSession } from './api.ts';
import { App } from './app.tsx';
import { Expired } from './screens/expired.tsx';
import './styles.css';

async function start() {
  const code = new URLSearchParams(location.hash.slice(1)).get('code') ?? undefined;
  const entering = location.pathname === '/portal/enter';
  if (code || entering) history.replaceState(null, '', '/portal/');
  const session = await openSession(code);
  // Entered: load the portal again, now under the project's frame-ancestors (the link's page allows any).
  if (session && entering) return location.replace('/portal/');
  const root = document.getElementById('app') as HTMLElement;
  // In the language last chosen in this tab, else the session's, else the browser's.
  const language = sessionStorage.getItem('portal-language') ?? session?.language ?? navigator.language;
  const expired = () => render(<Expired language={language} />, root);
  if (!session) return expired();
  render(<App session={session} onExpired={expired} />, root);
}

void start();
