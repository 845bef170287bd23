// An endpoint's attempts in each of the last 24 hours as stacked bars, succeeded below and failed above,
// scaled to the busiest hour with an axis; the figures are a table too, for screen readers and exact reading.
import { useEffect, useState } from 'preact/hooks';
import { call, type Schemas } from '../api.ts';
import { useLocale } from '../i18n/index.ts';
import { Failure } from './common.tsx';
import { niceTop, ValueAxis } from './usage.tsx';

type Stats = Schemas['EndpointStats'];
const WIDTH = 560;
const HEIGHT = 120;
const LEFT = 48;
const PLOT = WIDTH - LEFT;

export function EndpointStats({ endpointId }: { endpointId: string }) {
  const { t, number, language } = useLocale();
  const [stats, setStats] = useState<Stats>();
  const [failure, setFailure] = useState<unknown>();
  useEffect(
    () => void call<Stats>('GET', `/core/v1/destinations/${endpointId}/stats`).then(setStats, setFailure),
    [endpointId],
  );
  if (!stats) return <Failure error={failure} />;
  const { hours } = stats;
  const succeeded = hours.reduce((sum, hour) => sum + hour.succeeded, 0);
  const failed = hours.reduce((sum, hour) => sum + hour.failed, 0);
  const top = niceTop(Math.max(0, ...hours.map((hour) => hour.succeeded + hour.failed)));
  const bar = PLOT / hours.length;
  const height = (value: number) => (value / top) * HEIGHT;
  const time = (iso: string) =>
    new Intl.DateTimeFormat(language, { weekday: 'short', hour: 'numeric', minute: '2-digit' }).format(
      new Date(iso),
    );
  // The axis runs from 24 hours ago to now: said so, since both ends are the same time of day.
  const summary = t('stats.summary', { succeeded: number(succeeded), failed: number(failed) });
  return (
    <section aria-labelledby="stats-title">
      <h2 id="stats-title">{t('stats.title')}</h2>
      <p class="legend">
        <span class="swatch" data-tone="ok" /> {t('stats.succeeded')} <span class="swatch" data-tone="bad" />{' '}
        {t('stats.failed')} · {summary}
      </p>
      <svg
        class="chart"
        viewBox={`0 0 ${WIDTH} ${HEIGHT + 24}`}
        role="img"
        aria-label={`${t('stats.title')}: ${summary}`}
      >
        <ValueAxis top={top} left={LEFT} width={WIDTH} y={(value) => HEIGHT - height(value)} />
        {hours.map((hour, i) => (
          <g key={hour.hour}>
            <rect
              x={LEFT + i * bar + 1}
              y={HEIGHT - height(hour.succeeded)}
              width={bar - 2}
              height={height(hour.succeeded)}
              class="succeeded"
            />
            <rect
              x={LEFT + i * bar + 1}
              y={HEIGHT - height(hour.succeeded + hour.failed)}
              width={bar - 2}
              height={height(hour.failed)}
              class="failed"
              data-failed={hour.failed}
            />
          </g>
        ))}
        <text x={LEFT} y={HEIGHT + 18} class="axis">
          {t('stats.from')}
        </text>
        <text x={WIDTH} y={HEIGHT + 18} class="axis" text-anchor="end">
          {t('stats.to')}
        </text>
      </svg>
      <details>
        <summary>{t('usage.figures')}</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{t('stats.hour')}</th>
              <th scope="col">{t('stats.succeeded')}</th>
              <th scope="col">{t('stats.failed')}</th>
            </tr>
          </thead>
          <tbody>
            {hours.map((hour) => (
              <tr key={hour.hour}>
                <td>{time(hour.hour)}</td>
                <td>{number(hour.succeeded)}</td>
                <td>{number(hour.failed)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}
