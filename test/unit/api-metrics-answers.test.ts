import test from 'ava';
import { ApiMetrics } from '../../src/observability/api-metrics';

const probes = { dbPool: () => null, redisReady: () => true, throttleListening: () => true };

test('When answers are observed, Then a read of the metrics counts every one of them by method, route and status, with their latency', async (t) => {
  const metrics = new ApiMetrics(probes);
  metrics.observeRequest('POST', '/helpdesk/v1/order-status', '200', 0.004);
  metrics.observeRequest('POST', '/helpdesk/v1/order-status', '200', 0.02);
  metrics.observeRequest('POST', '/helpdesk/v1/order-status', '404', 0.016);
  const text = await metrics.registry.metrics();
  t.regex(text, /sidecar_http_requests_total\{method="POST",route="\/helpdesk\/v1\/order-status",status="200"\} 2/);
  t.regex(text, /sidecar_http_requests_total\{method="POST",route="\/helpdesk\/v1\/order-status",status="404"\} 1/);
  t.regex(text, /sidecar_http_request_duration_seconds_bucket\{le="0.005",method="POST",route="\/helpdesk\/v1\/order-status",status="200"\} 1/);
  t.regex(text, /sidecar_http_request_duration_seconds_count\{method="POST",route="\/helpdesk\/v1\/order-status",status="200"\} 2/);
  // Read again with nothing new: the same counts, nothing counted twice.
  t.regex(await metrics.registry.metrics(), /sidecar_http_requests_total\{method="POST",route="\/helpdesk\/v1\/order-status",status="200"\} 2/);
});

test('When more answers come than are held, Then they are counted as they come, and a read sees all of them', async (t) => {
  const metrics = new ApiMetrics(probes);
  for (let i = 0; i < 1300; i++) metrics.observeRequest('GET', '/health', '200', 0.001);
  const json = await metrics.registry.getSingleMetric('sidecar_http_requests_total')!.get();
  t.is(json.values.find((value) => value.labels.route === '/health')?.value, 1300);
});
