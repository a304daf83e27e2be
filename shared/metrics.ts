import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * The single metrics instance: CloudWatch embedded-metric-format lines, no API calls. Per request the handler factory
 * records `Latency` (whose SampleCount is the request count: there is no `Requests` metric), `ClientErrors` /
 * `ServerErrors`, and the DynamoDB capacity units `RCU` / `WCU` under the dimension `operation` (A1 … R8). Each is
 * a custom metric per operation at $0.30 a month (bench/cost-model.ts). Off in local mode
 * (`POWERTOOLS_METRICS_DISABLED`), where the request log line says the same.
 */
export const metrics = new Metrics({ namespace: 'Dispatch', serviceName: 'dispatch' });

/** Whether the EMF lines are written (not in local mode and the tests, where the request log line stands alone). */
export const metricsPublished = (): boolean => process.env['POWERTOOLS_METRICS_DISABLED'] !== 'true';

/**
 * `details` ride along in the EMF line as properties (not metrics: no cost in CloudWatch metrics), so that a
 * successful request needs no log line of its own (issue 27.4; shared/http/endpoint.ts). The line is written for
 * every invocation and priced by the byte: short metric names, nothing the operation already says.
 */
export function recordRequest(
  operation: string,
  status: number,
  durationMs: number,
  capacity?: { rcu: number; wcu: number },
  details: Record<string, string | number | undefined> = {},
): void {
  for (const [key, value] of Object.entries(details)) {
    if (value !== undefined) metrics.addMetadata(key, String(value));
  }
  metrics.addDimension('operation', operation);
  if (status >= 500) metrics.addMetric('ServerErrors', MetricUnit.Count, 1);
  else if (status >= 400) metrics.addMetric('ClientErrors', MetricUnit.Count, 1);
  metrics.addMetric('Latency', MetricUnit.Milliseconds, durationMs);
  if (capacity) {
    metrics.addMetric('RCU', MetricUnit.Count, capacity.rcu);
    metrics.addMetric('WCU', MetricUnit.Count, capacity.wcu);
  }
  metrics.publishStoredMetrics();
}
