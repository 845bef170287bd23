// Messages and formats in the session's language: its catalogue (English for a language without one),
// dates and numbers through Intl in the language itself.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { en, type MessageKey, type Messages } from './en.ts';

export type { MessageKey };

import { fr } from './fr.ts';

const CATALOGUES: Record<string, Messages> = { en, fr };

export interface Locale {
  language: string;
  t(key: MessageKey, params?: Record<string, string | number>): string;
  date(iso: string): string;
  number(value: number): string;
  percent(value: number): string;
}

export function localeOf(language: string): Locale {
  const messages = CATALOGUES[language] ?? CATALOGUES[language.split('-')[0] ?? ''] ?? en;
  const dates = new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'medium' });
  const numbers = new Intl.NumberFormat(language);
  const percents = new Intl.NumberFormat(language, { style: 'percent', maximumFractionDigits: 1 });
  return {
    language,
    t: (key, params = {}) =>
      messages[key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`)),
    date: (iso) => dates.format(new Date(iso)),
    number: (value) => numbers.format(value),
    percent: (value) => percents.format(value),
  };
}

/** The locale of the portal's screens, set by the app from the chosen language. */
export const LocaleContext = createContext<Locale>(localeOf('en'));
export const useLocale = () => useContext(LocaleContext);
