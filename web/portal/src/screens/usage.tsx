// The project's usage by day, one chart per metric, with its daily limit drawn; the figures are also a
// table, for screen readers and for reading exact numbers.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { Failure } from './common.tsx';

type Usage = Schemas['Usage'];
const DAYS = 14;
const WIDTH = 560;
const HEIGHT = 160;

export function UsageScreen() {
  const { t } = useLocale();
  const [usage, setUsage] = useState<Usage>();
  const [failure, setFailure] = useState<unknown>();
  useEffect(() => {
    const to = new Date();
    const from = new Date(to.getTime() - (DAYS - 1) * 86_400_000);
    const day = (d: Date) => d.toISOString().slice(0, 10);
    void call<Usage>('GET', `/core/v1/usage?from=${day(from)}&to=${day(to)}`).then(setUsage, setFailure);
  }, []);
  if (!usage) return failure ? <Failure error={failure} /> : <p>{t('loading')}</p>;
  const days = daysBetween(usage.from, usage.to);
  const metrics = [
    ...new Set([...usage.limits, ...usage.data].map((row) => `${row.capability}/${row.metric}`)),
  ];
  return (
    <>
      <h1 tabIndex={-1}>{t('usage.title')}</h1>
      {metrics.map((metric) => (
        <Chart key={metric} metric={metric} days={days} usage={usage} />
      ))}
    </>
  );
}

function Chart({ metric, days, usage }: { metric: string; days: string[]; usage: Usage }) {
  const { t, number, language } = useLocale();
  const counts = days.map(
    (day) =>
      usage.data.find((row) => row.day === day && `${row.capability}/${row.metric}` === metric)?.count ?? 0,
  );
  const limit = usage.limits.find((row) => `${row.capability}/${row.metric}` === metric)?.dailyLimit;
  const top = Math.max(1, ...counts, limit ?? 0);
  const bar = WIDTH / days.length;
  const y = (value: number) => HEIGHT - (value / top) * HEIGHT;
  const label = (day: string) =>
    new Intl.DateTimeFormat(language, { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(
      new Date(day),
    );
  const id = metric.replace(/\W/g, '-');
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{metric}</h2>
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT + 20}`}
        role="img"
        aria-label={t('usage.chart', { metric, limit: limit === undefined ? '—' : number(limit) })}
      >
        {counts.map((count, i) => (
          <rect
            key={days[i]}
            x={i * bar + 2}
            y={y(count)}
            width={bar - 4}
            height={HEIGHT - y(count)}
            class="bar"
          />
        ))}
        {limit !== undefined && <line x1="0" x2={WIDTH} y1={y(limit)} y2={y(limit)} class="limit" />}
        <text x="0" y={HEIGHT + 16} class="axis">
          {label(days[0] ?? usage.from)}
        </text>
        <text x={WIDTH} y={HEIGHT + 16} class="axis" text-anchor="end">
          {label(days.at(-1) ?? usage.to)}
        </text>
      </svg>
      <details>
        <summary>{t('usage.figures')}</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{t('usage.day')}</th>
              <th scope="col">{t('usage.count')}</th>
            </tr>
          </thead>
          <tbody>
            {days.map((day, i) => (
              <tr key={day}>
                <td>{label(day)}</td>
                <td>{number(counts[i] ?? 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {limit !== undefined && <p>{t('usage.limit', { limit: number(limit) })}</p>}
      </details>
    </section>
  );
}

function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(from); at <= Date.parse(to); at += 86_400_000)
    days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}
