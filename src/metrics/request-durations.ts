// The API's request-duration histogram, kept without prom-client's per-observation work: its observe
// builds a label object, validates it and hashes it on every call, garbage included: a visible share of a
// cheap request's CPU (docs/decisions/measured-choices.md). Here a series is made once per route, method and
// status, found through three maps without building a key, and an observation is a bucket's increment. The registry reads it like its own histograms: the same exposition, cumulative buckets with
// `le`, `_sum` and `_count`.
import type client from 'prom-client';

interface Series {
  labels: { route: string; method: string; status_code: string };
  /** per bucket, not cumulative; the last counts what is above every bound (+Inf) */
  counts: number[];
  sum: number;
  count: number;
}

export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** route → method → status → series: found without building a key */
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();
  readonly name: string;
  readonly help: string;
  private readonly buckets: number[];

  constructor(name: string, help: string, buckets: number[]) {
    this.name = name;
    this.help = help;
    this.buckets = buckets;
  }

  /** Records a request's duration, in seconds. */
  observe(route: string, method: string, statusCode: number, seconds: number): void {
    const series = this.seriesOf(route, method, statusCode);
    let bucket = 0;
    while (bucket < this.buckets.length && seconds > (this.buckets[bucket] as number)) bucket++;
    (series.counts[bucket] as number)++;
    series.sum += seconds;
    series.count++;
  }

  private seriesOf(route: string, method: string, statusCode: number): Series {
    let methods = this.series.get(route);
    if (methods === undefined) {
      methods = new Map();
      this.series.set(route, methods);
    }
    let statuses = methods.get(method);
    if (statuses === undefined) {
      statuses = new Map();
      methods.set(method, statuses);
    }
    let series = statuses.get(statusCode);
    if (!series) {
      series = {
        labels: { route, method, status_code: String(statusCode) },
        counts: new Array<number>(this.buckets.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      statuses.set(statusCode, series);
    }
    return series;
  }

  /** What the registry exposes, in the shape of prom-client's own metrics. */
  get() {
    const values: client.MetricValueWithName<string>[] = [];
    const all = [...this.series.values()].flatMap((methods) =>
      [...methods.values()].flatMap((s) => [...s.values()]),
    );
    for (const series of all) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += series.counts[i] as number;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { le: bound, ...series.labels },
          value: cumulative,
        });
      });
      values.push({
        metricName: `${this.name}_bucket`,
        labels: { le: '+Inf', ...series.labels },
        value: series.count,
      });
      values.push({ metricName: `${this.name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: series.labels, value: series.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}
