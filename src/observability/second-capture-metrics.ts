import { Counter, Gauge, type Registry } from 'prom-client';
import type { Provider } from '../../entities';
import type { FlaggedCapture } from '../data-access/second-capture-repository';
import { secondCaptureUnresolved } from '../payments/second-captures';

const PROVIDERS: Provider[] = ['card_gateway', 'mobile_wallet'];

/**
 * Second captures of one order (src/payments/second-captures.ts), from the payments the worker's sweep flagged: a
 * flag is never taken back, so the total only grows although it is read from the table, the same whichever API
 * process is scraped. Both start at 0 for each provider, so the first one is an increase Prometheus sees.
 */
export function addSecondCaptureMetrics(registers: Registry[], flagged: FlaggedCapture[]): void {
  const labelNames = ['provider'];
  const total = new Counter({
    name: 'sidecar_payments_captured_twice_total',
    help: 'Payments flagged as a second capture of an order that another payment had already paid, by the later payment\'s provider (the one to refund).',
    labelNames, registers,
  });
  const unresolved = new Gauge({
    name: 'sidecar_payments_captured_twice_unresolved',
    help: 'Second captures still waiting for a refund: the flagged payment and the one it duplicates are both still captured.',
    labelNames, registers,
  });
  for (const provider of PROVIDERS) {
    total.inc({ provider }, 0);
    unresolved.set({ provider }, 0);
  }
  for (const capture of flagged) {
    total.inc({ provider: capture.provider });
    if (secondCaptureUnresolved(capture.status, capture.keptStatus, capture.paidOutside)) unresolved.inc({ provider: capture.provider });
  }
}
