// "Send again every failed event since…": the dry run counts first, a confirmation names the count, and
// the job that sends them shows its progress until done.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { Failure, useActionKeys } from './common.tsx';

type Job = Schemas['Job'];
const POLL_MS = 1000;

/** Yesterday's midnight in the browser's time zone, as a datetime-local value (which is local time). */
function yesterday(): string {
  const day = new Date(Date.now() - 86_400_000);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${day.getFullYear()}-${two(day.getMonth() + 1)}-${two(day.getDate())}T00:00`;
}

export function Recover({ endpointId }: { endpointId: string }) {
  const { t, number } = useLocale();
  const [since, setSince] = useState(yesterday);
  const [counted, setCounted] = useState<{ since: string; matched: number }>();
  const [job, setJob] = useState<Job>();
  const [failure, setFailure] = useState<unknown>();
  const keys = useActionKeys();
  const body = (dryRun: boolean) => ({ states: ['dead'], since: new Date(since).toISOString(), dryRun });
  const path = `/core/v1/destinations/${endpointId}/recover`;
  const count = async (event: SubmitEvent) => {
    event.preventDefault();
    setFailure(undefined);
    setJob(undefined);
    try {
      const { matched } = await call<Schemas['Recovery']>('POST', path, { body: body(true) });
      setCounted({ since, matched });
    } catch (error) {
      setFailure(error);
    }
  };
  const start = async () => {
    const action = `recover ${since}`;
    try {
      const { jobId } = await call<Schemas['Recovery']>('POST', path, {
        body: body(false),
        idempotencyKey: keys.of(action),
      });
      keys.settle(action);
      setCounted(undefined);
      if (jobId) setJob(await call<Job>('GET', `/core/v1/jobs/${jobId}`));
    } catch (error) {
      keys.settle(action, error);
      setFailure(error);
    }
  };
  // The job's progress, read every second until it ends.
  useEffect(() => {
    if (!job || job.state === 'done' || job.state === 'failed') return;
    const timer = setTimeout(
      () => call<Job>('GET', `/core/v1/jobs/${job.id}`).then(setJob, setFailure),
      POLL_MS,
    );
    return () => clearTimeout(timer);
  }, [job]);
  return (
    <section aria-labelledby="recover-title">
      <h2 id="recover-title">{t('recover.title')}</h2>
      <form class="inline" onSubmit={count}>
        <label for="recover-since">{t('recover.since')}</label>
        <input
          id="recover-since"
          type="datetime-local"
          value={since}
          required
          onChange={(e) => {
            setSince(e.currentTarget.value);
            setCounted(undefined);
          }}
        />
        <button type="submit" class="secondary">
          {t('recover.count')}
        </button>
      </form>
      <div aria-live="polite">
        {counted && (
          <p>
            {t('recover.matched', { count: number(counted.matched) })}{' '}
            {counted.matched > 0 && (
              <button type="button" onClick={start}>
                {t('recover.start', { count: number(counted.matched) })}
              </button>
            )}
          </p>
        )}
        {job && (
          <p>
            <label for="recover-progress">
              {t(`job.${job.state}`)} ·{' '}
              {t('recover.progress', { done: number(job.done), total: number(job.total) })}
            </label>{' '}
            <progress id="recover-progress" max={Math.max(job.total, 1)} value={job.done} />
          </p>
        )}
      </div>
      <Failure error={failure} />
    </section>
  );
}
