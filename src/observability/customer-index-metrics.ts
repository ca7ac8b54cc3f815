import { Counter, Gauge, type Registry } from 'prom-client';
import type { SweepFigures } from '../data-access/customer-contact-index';

/**
 * The customer index's rolling sweep (src/customers/refresh-customer-contacts.use-case.ts), as the worker keeps it
 * in the index's state row: totals that survive a restart of either process, so every API process shows the same
 * counters, and where the pass under way stands. One series per store the index has been built for.
 */
export function addCustomerIndexMetrics(registers: Registry[], figures: SweepFigures[]): void {
  const labelNames = ['store'];
  const rowsRead = new Counter({
    name: 'sidecar_customer_index_sweep_rows_read_total',
    help: 'Rows the customer index\'s rolling sweep read: the orders counted at each pass\'s start (one index entry each), the shop\'s rows of each order read (HPOS: the order and its address rows; posts: the post and its meta rows of the index\'s keys) and the index\'s own rows compared.',
    labelNames, registers,
  });
  const passes = new Counter({ name: 'sidecar_customer_index_sweep_passes_total', help: 'Whole passes of the customer index\'s rolling sweep over the store.', labelNames, registers });
  const position = new Gauge({
    name: 'sidecar_customer_index_sweep_position',
    help: 'Share of the orders counted at the start of the sweep\'s pass under way that it has read (0 to 1); 1 while it waits for the next pass.',
    labelNames, registers,
  });
  const orders = new Gauge({ name: 'sidecar_customer_index_sweep_pass_orders', help: 'Orders and subscriptions the sweep\'s pass under way (or the last) counted at its start: what it reads, at CUSTOMER_INDEX_SWEEP_SECONDS\'s pace.', labelNames, registers });
  const duration = new Gauge({ name: 'sidecar_customer_index_sweep_last_pass_duration_seconds', help: 'How long the sweep\'s last whole pass took; 0 before the first.', labelNames, registers });
  const lastRows = new Gauge({ name: 'sidecar_customer_index_sweep_last_pass_rows_read', help: 'Rows the sweep\'s last whole pass read (as sidecar_customer_index_sweep_rows_read_total counts them); 0 before the first.', labelNames, registers });
  for (const figure of figures) {
    const labels = { store: figure.store };
    rowsRead.inc(labels, figure.rowsRead);
    passes.inc(labels, figure.passes);
    const underWay = figure.startedAt !== null && figure.finishedAt === null;
    position.set(labels, underWay ? (figure.orders ? Math.min(1, figure.ordersRead / figure.orders) : 0) : 1);
    orders.set(labels, figure.orders);
    duration.set(labels, figure.lastPassMs / 1000);
    lastRows.set(labels, figure.lastPassRows);
  }
}
