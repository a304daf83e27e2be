import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * The single metrics instance: CloudWatch embedded-metric-format lines, no API calls. Per request the handler factory
 * records `Requests`, `ClientErrors` / `ServerErrors` and `Latency` under the dimension `operation` (A1 … R8).
 * Off in local mode (`POWERTOOLS_METRICS_DISABLED`), where the request log line says the same.
 */
export const metrics = new Metrics({ namespace: 'Dispatch', serviceName: 'dispatch' });

export function recordRequest(
  operation: string,
  status: number,
  durationMs: number,
  capacity?: { rcu: number; wcu: number },
): void {
  metrics.addDimension('operation', operation);
  metrics.addMetric('Requests', MetricUnit.Count, 1);
  if (status >= 500) metrics.addMetric('ServerErrors', MetricUnit.Count, 1);
  else if (status >= 400) metrics.addMetric('ClientErrors', MetricUnit.Count, 1);
  metrics.addMetric('Latency', MetricUnit.Milliseconds, durationMs);
  if (capacity) {
    metrics.addMetric('ReadCapacityUnits', MetricUnit.Count, capacity.rcu);
    metrics.addMetric('WriteCapacityUnits', MetricUnit.Count, capacity.wcu);
  }
  metrics.publishStoredMetrics();
}
