// A polling destination's feed, as its consumer reads it: oldest first, a page at a time from the cursor
// the page before answered (the service keeps no cursor: reading changes nothing).
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { follow } from '../router.ts';
import { Failure } from './common.tsx';

type Page = Schemas['DestinationMessages'];
const PAGE = 20;

export function FeedMessages({ destinationId }: { destinationId: string }) {
  const { t, date } = useLocale();
  const [page, setPage] = useState<Page>();
  const [failure, setFailure] = useState<unknown>();
  const read = (cursor?: string) => {
    const query = new URLSearchParams({ limit: String(PAGE), ...(cursor ? { cursor } : {}) });
    call<Page>('GET', `/core/v1/destinations/${destinationId}/messages?${query}`).then(setPage, setFailure);
  };
  useEffect(() => read(), [destinationId]);
  return (
    <section aria-labelledby="feed-title">
      <h2 id="feed-title">{t('feed.title')}</h2>
      <p>{t('feed.intro')}</p>
      <Failure error={failure} />
      {page && page.data.length === 0 && <p>{t('feed.empty')}</p>}
      {page && page.data.length > 0 && (
        <ul class="feed">
          {page.data.map((message) => (
            <li key={`${message.eventId}-${message.timestamp}`}>
              <a
                href={`/portal/events/${message.eventId}`}
                onClick={(e) => follow(e, `/portal/events/${message.eventId}`)}
              >
                {message.type}
              </a>{' '}
              <span class="under">{date(message.timestamp)}</span>
            </li>
          ))}
        </ul>
      )}
      {page && page.data.length === PAGE && (
        <button type="button" class="secondary" onClick={() => read(page.nextCursor)}>
          {t('feed.next')}
        </button>
      )}
    </section>
  );
}
