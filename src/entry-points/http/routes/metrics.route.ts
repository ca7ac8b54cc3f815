import { Registry } from 'prom-client';
import type { Request, Response } from 'restify';
import { combineSnapshots, type MetricsExchange } from '../../../observability/metrics-exchange';
import { sampleShopMetrics, type ShopMetricSources } from '../../../observability/shop-metrics';
import type { AddressList } from '../address-list';
import { sendError } from '../http-io';
import type { Transport } from '../transport';

export interface MetricsRouteDeps {
  /** METRICS_ALLOWED. */
  allowed: AddressList;
  transport: Transport;
  exchange: MetricsExchange;
  sources: ShopMetricSources;
}

/**
 * GET /metrics in Prometheus's text format, for the client addresses in METRICS_ALLOWED (behind a trusted
 * proxy, the address it forwards for); others get 403 `forbidden`.
 */
export function metricsRoute({ allowed, transport, exchange, sources }: MetricsRouteDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    if (!allowed.has(transport.clientIp(req))) {
      return sendError(res, 403, 'forbidden', 'Metrics are served only to the addresses in METRICS_ALLOWED.');
    }
    const snapshots = await exchange.gather();
    const shop = await sampleShopMetrics(sources, snapshots.length);
    const registry = Registry.merge([combineSnapshots(snapshots), shop]);
    const text = await registry.metrics();
    res.writeHead(200, { 'Content-Type': registry.contentType, 'Content-Length': String(Buffer.byteLength(text)), 'Cache-Control': 'no-store' });
    res.end(text);
  };
}
