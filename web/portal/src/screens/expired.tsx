import { localeOf } from '../i18n/index.ts';

export function Expired({ language }: { language: string }) {
  const { t } = localeOf(language);
  document.documentElement.lang = language;
  return (
    <main class="expired">
      <h1>{t('expired.title')}</h1>
      <p>{t('expired.body')}</p>
    </main>
  );
}
