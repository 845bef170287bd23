// The portal's few routes need no router library: the path is state, links push history, and the back
// button pops it.
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();
addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

export function navigate(path: string) {
  history.pushState(null, '', path);
  for (const listener of listeners) listener();
  document.querySelector<HTMLElement>('main h1')?.focus();
}

/** The current path, kept current. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return path;
}

/** A link's click handler that navigates in place (a modified click still opens a new tab). */
export function follow(event: MouseEvent, path: string) {
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(path);
}
