// The project's usage by day, one chart per metric under its human name, scaled to its own counts with an
// axis, its daily limit drawn when it is in view; the figures are also a table, for screen readers and for
// reading exact numbers.
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

/** The metric as people say it: Core's by their names, a capability's as "Notify · messages sent". */
function metricName(metric: string, t: ReturnType<typeof useLocale>['t']): string {
  const [capability = '', name = ''] = metric.split('/');
  if (capability === 'core' && CORE_METRICS.has(name)) return t(`metric.${name}` as 'metric.api_requests');
  const spoken = name.replaceAll('_', ' ');
  return `${capability.charAt(0).toUpperCase()}${capability.slice(1)} · ${spoken}`;
}
const CORE_METRICS = new Set(['api_requests', 'events_published', 'subjects_erased']);

/** The top of the scale: the least of 1, 2 or 5 × 10ⁿ at or above the highest value (1 at least). */
export function niceTop(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= value) ?? 10 * power;
}

/** The value axis of a chart: 0, half and the top, each a grid line and its figure in the margin. */
export function ValueAxis(props: { top: number; left: number; width: number; y: (value: number) => number }) {
  const { number } = useLocale();
  const { top, left, width, y } = props;
  return (
    <>
      {[0, top / 2, top].map((tick) => (
        <g key={tick}>
          <line x1={left} x2={width} y1={y(tick) + 0.5} y2={y(tick) + 0.5} class="grid" />
          <text x={left - 6} y={Math.max(12, y(tick) + 4)} class="axis" text-anchor="end">
            {number(tick)}
          </text>
        </g>
      ))}
    </>
  );
}

const LEFT = 56;
const PLOT = WIDTH - LEFT;

function Chart({ metric, days, usage }: { metric: string; days: string[]; usage: Usage }) {
  const { t, number, language } = useLocale();
  const counts = days.map(
    (day) =>
      usage.data.find((row) => row.day === day && `${row.capability}/${row.metric}` === metric)?.count ?? 0,
  );
  const limit = usage.limits.find((row) => `${row.capability}/${row.metric}` === metric)?.dailyLimit;
  // The chart is scaled to the counts; the limit is drawn only when it is within twice the highest
  // count (else it would flatten every bar), and said in words either way.
  const highest = Math.max(0, ...counts);
  const limitInView = limit !== undefined && limit !== null && limit <= Math.max(2 * highest, 1);
  const top = niceTop(limitInView ? Math.max(highest, limit) : highest);
  const bar = PLOT / days.length;
  const y = (value: number) => HEIGHT - (value / top) * HEIGHT;
  const label = (day: string) =>
    new Intl.DateTimeFormat(language, { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(
      new Date(day),
    );
  const id = metric.replace(/\W/g, '-');
  const name = metricName(metric, t);
  const limitText = limit === undefined || limit === null ? '—' : number(limit);
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{name}</h2>
      <p class="hint">
        <code>{metric}</code> · {t('usage.limit', { limit: limitText })}
      </p>
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`}
        role="img"
        aria-label={t('usage.chart', { metric: name, limit: limitText })}
      >
        <ValueAxis top={top} left={LEFT} width={WIDTH} y={y} />
        {counts.map((count, i) => (
          <rect
            key={days[i]}
            x={LEFT + i * bar + 2}
            y={y(count)}
            width={bar - 4}
            height={HEIGHT - y(count)}
            class="bar"
            data-count={count}
          />
        ))}
        {limitInView && <line x1={LEFT} x2={WIDTH} y1={y(limit)} y2={y(limit)} class="limit" />}
        <text x={LEFT} y={HEIGHT + 18} class="axis">
          {label(days[0] ?? usage.from)}
        </text>
        <text x={WIDTH} y={HEIGHT + 18} class="axis" text-anchor="end">
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
