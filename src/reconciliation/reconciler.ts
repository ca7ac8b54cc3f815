import type { UnwantedCharges } from '../payments/unwanted-charges';
import type { AgreementDisableReason, AgreementStatus, PaymentStatus, Provider, ReconcileKind } from '../../entities';
import type { Config } from '../config';
import type { OrderRepository } from '../data-access/order-repository';
import {
  agreementIsOpen, AWAITING_STATUSES, paymentIsOpen,
  type AgreementTarget, type ChangedOrder, type PaymentTarget, type ScheduledItem, type Seen, type ReconcileItemRecord, type ReconcileMetrics, type ReconciliationRepository,
} from '../data-access/reconciliation-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import type { CardGatewayEventHandler } from '../payments/card-gateway/card-gateway-event-handler';
import type { MobileWalletEventHandler } from '../payments/mobile-wallet/mobile-wallet-event-handler';
import { ProviderUnavailableError, type EventOutcome } from '../payments/processing-outcome';
import type { CardGatewayClient } from '../payments/providers/card-gateway/client';
import type {
  CardGatewayEvent, CardGatewayInvoiceEventType, CardGatewayPaymentMethodEventType, MobileWalletAgreementEventType, MobileWalletChargeEventType, MobileWalletEvent,
} from '../payments/providers/events';
import type { ProviderFailure } from '../payments/providers/http-request';
import type { MobileWalletClient } from '../payments/providers/mobile-wallet/client';
import { displayedOrderNumber, type ShopOrder } from '../shop/order';
import { gmtDateTimeMs } from '../shop/shop-time';
import { backoffSeconds, ReconcileSchedule } from './schedule';
import { CARD_GATEWAY_METHOD_PREFIX } from '../shop/payment-gateways';

/** Something open at a provider, with what the service knows of it. */
export type ReconcileTarget =
  | { kind: 'payment'; provider: Provider; ref: number; payment: PaymentTarget }
  | { kind: 'agreement'; provider: Provider; ref: number; agreement: AgreementTarget }
  /** A WooCommerce order awaiting the card gateway, no payment recorded yet; `handle` is its invoice's. */
  | { kind: 'order'; provider: 'card_gateway'; ref: number; handle: string; status: string };

/** A synthetic provider event, as the webhook would have named it. */
export type SyntheticEvent =
  | { provider: 'card_gateway'; type: CardGatewayInvoiceEventType; invoice: string }
  | { provider: 'card_gateway'; type: CardGatewayPaymentMethodEventType; paymentMethod: string; customer: string | null }
  | { provider: 'mobile_wallet'; type: MobileWalletChargeEventType; agreementId: string; chargeId: string }
  | { provider: 'mobile_wallet'; type: MobileWalletAgreementEventType; agreementId: string };

/** What asking about one item came to. */
export interface Finding {
  kind: ReconcileKind;
  provider: Provider;
  /** The payment's, agreement's or order's id. */
  id: number;
  externalId: string;
  orderId: number | null;
  /** The service's status before (a payment with none yet is `null`; an order's WooCommerce status). */
  localStatus: string | null;
  /** What the provider says (invoice or charge state, agreement or payment method status). */
  providerState: string | null;
  /**
   * `unchanged`: the provider says nothing new; `would_change`: a dry run found something to change;
   * `changed`: the events were handled and at least one acted; `unreachable`: the provider could not be asked.
   */
  outcome: 'unchanged' | 'would_change' | 'changed' | 'unreachable';
  /** The events that tell what the provider said, as its webhooks would have. */
  events: string[];
  /** What handling each event did (not in a dry run). */
  notes: string[];
  /** The provider will not change it any more (cancelled at the provider): stop asking. */
  final: boolean;
  error: string | null;
  rateLimited: boolean;
}

export interface PassSummary {
  discovered: number;
  checked: number;
  found: number;
  fixed: number;
  unreachable: number;
  closed: number;
  expired: number;
}

/** How long a taken item is left to the pass that took it before another may. */
const CLAIM_LEASE_MS = 10 * 60_000;
/** Changes are looked for again this far behind the last look: a transaction stamps its rows before it commits. */
const DISCOVERY_OVERLAP_MS = 5 * 60_000;
const DISCOVERY_PAGE = 500;
const DISCOVERY_MAX_PAGES = 20;
/** WooCommerce orders awaiting the gateway are looked for at most this often. */
const ORDER_DISCOVERY_INTERVAL_MS = 60_000;

class Unreachable extends Error {
  constructor(message: string, readonly rateLimited: boolean) {
    super(message);
  }
}

function unreachable(what: string, failure: ProviderFailure): Unreachable {
  return new Unreachable(`${what}: ${failure.kind}${failure.status ? ` ${failure.status}` : ''} ${failure.message}`.trim(), isRateLimited(failure.status, failure.code, failure.message));
}

/** HTTP 429, or the card gateway's 122 (request rate limit) and 123 (concurrent request limit). */
function isRateLimited(status: number | undefined, code: unknown, message: string): boolean {
  return status === 429 || code === 122 || code === 123 || code === '122' || code === '123' || /rate limit|concurrent request limit/i.test(message);
}

/** States in which a provider will still take a charge unless it is cancelled (the wallet's, the card gateway's). */
const STILL_TO_TAKE = ['PENDING', 'DUE', 'pending', 'created'];
const CAPTURED_AT_WALLET = ['CHARGED', 'PARTIALLY_CAPTURED', 'PARTIALLY_REFUNDED', 'REFUNDED'];

/** What the card gateway's invoice (or charge) state tells that the service does not know yet, in the order its webhooks would tell it. */
export function cardGatewayInvoiceEvents(local: PaymentStatus | null, state: string, refunded: boolean): CardGatewayInvoiceEventType[] {
  if (state === 'settled') {
    const events: CardGatewayInvoiceEventType[] = [];
    if (local !== 'CAPTURED' && local !== 'REFUNDED') events.push('invoice_settled');
    if (refunded && local !== 'REFUNDED') events.push('invoice_refund');
    return events;
  }
  if (state === 'authorized') return local === null || local === 'FAILED' ? ['invoice_authorized'] : [];
  if (state === 'failed') return local === null || local === 'AUTHORIZED' ? ['invoice_failed'] : [];
  return [];
}

export function walletChargeEvents(local: PaymentStatus | null, status: string): MobileWalletChargeEventType[] {
  if (status === 'RESERVED') return local === null || local === 'FAILED' ? ['recurring.charge-reserved.v1'] : [];
  if (CAPTURED_AT_WALLET.includes(status)) {
    const events: MobileWalletChargeEventType[] = [];
    if (local !== 'CAPTURED' && local !== 'REFUNDED') events.push('recurring.charge-captured.v1');
    if ((status === 'REFUNDED' || status === 'PARTIALLY_REFUNDED') && local !== 'REFUNDED') events.push('recurring.charge-refunded.v1');
    return events;
  }
  if (status === 'FAILED') return local === null || local === 'AUTHORIZED' ? ['recurring.charge-failed.v1'] : [];
  if (status === 'CANCELLED') return local === null || local === 'AUTHORIZED' || local === 'FAILED' ? ['recurring.charge-canceled.v1'] : [];
  return [];
}

export function walletAgreementEvents(local: AgreementStatus, status: string): MobileWalletAgreementEventType[] {
  if (status === 'ACTIVE') return local === 'PENDING' ? ['recurring.agreement-activated.v1'] : [];
  if (status === 'STOPPED') return local !== 'DISABLED' ? ['recurring.agreement-stopped.v1'] : [];
  if (status === 'EXPIRED') return local !== 'DISABLED' ? ['recurring.agreement-expired.v1'] : [];
  return [];
}

export function cardPaymentMethodEvents(local: AgreementStatus, state: string, disableReason: AgreementDisableReason | null = null): CardGatewayPaymentMethodEventType[] {
  // Active again after it failed (the gateway's customer_payment_method_reactivated, lost or never sent): used again.
  if (state === 'active') return local === 'PENDING' || (local === 'DISABLED' && disableReason === 'FAILED') ? ['customer_payment_method_added'] : [];
  if (state === 'failed') return local !== 'DISABLED' ? ['customer_payment_method_failed'] : [];
  if (state === 'deleted' || state === 'inactivated') return local !== 'DISABLED' ? ['customer_payment_method_deleted'] : [];
  return [];
}

export interface ReconcilerDeps {
  config: Config['reconcile'];
  repository: ReconciliationRepository;
  orders: OrderRepository;
  settings: ShopSettingsRepository;
  /** Paced and read-only (see pacer.ts). */
  cardGateway: CardGatewayClient;
  mobileWallet: MobileWalletClient;
  /** Handlers over the same paced, read-only clients: what they find changes the shop as the webhook would have. */
  cardGatewayHandler: CardGatewayEventHandler;
  mobileWalletHandler: MobileWalletEventHandler;
  /** Providers with credentials; the others are not asked. */
  configured: Provider[];
  /** Cancels an open charge whose renewal was paid another way (one renewal, one payment). */
  unwanted?: Pick<UnwantedCharges, 'cancelIfUnwanted'>;
  log: Logger;
  clock: () => Date;
}

/**
 * Reconciliation: asks the providers about what is still open on their side (payments pending, reserved, or
 * failed with a retry planned; charges the service made; agreements pending or active; WooCommerce orders
 * awaiting the card gateway's answer) on a schedule, and hands what they say to the webhook handlers as the
 * events the webhooks would have been. The handlers read the provider back and move forward only, so a
 * webhook arriving afterwards adds nothing.
 */
export class Reconciler {
  readonly schedule: ReconcileSchedule;
  private running: Promise<unknown> = Promise.resolve();
  private ordersLookedAt = 0;
  private readonly repo: ReconciliationRepository;

  constructor(private readonly deps: ReconcilerDeps) {
    this.schedule = new ReconcileSchedule(deps.config.scheduleSeconds);
    this.repo = deps.repository;
  }

  /**
   * One pass of the worker: what opened or changed is put on the schedule, then what is due is asked about,
   * `RECONCILE_BATCH` items at most. Passes in one process run one after another. A provider that cannot be
   * asked leaves its items due again later (with backoff); a rate-limited one is not asked again in this pass.
   */
  /** One pass; `progress` is called as each item's check ends (the worker's watchdog judges a pass by it). */
  pass(progress: () => void = () => undefined): Promise<PassSummary> {
    const next = this.running.then(() => this.runPass(progress), () => this.runPass(progress));
    this.running = next.catch(() => undefined);
    return next;
  }

  private async runPass(progress: () => void): Promise<PassSummary> {
    const summary: PassSummary = { discovered: 0, checked: 0, found: 0, fixed: 0, unreachable: 0, closed: 0, expired: 0 };
    if (!this.deps.config.enabled) return summary;
    const now = this.deps.clock();
    summary.discovered = await this.discover(now);
    const counts = new Map<string, number>();
    const count = (finding: { provider: string; kind: string }, outcome: string) => {
      const key = `${finding.provider}|${finding.kind}|${outcome}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    };
    const paused = new Set<Provider>();
    try {
      for (const item of await this.repo.due(now, this.deps.configured, this.deps.config.batch)) {
        if (paused.has(item.provider)) continue;
        if (!(await this.repo.claim(item, new Date(now.getTime() + CLAIM_LEASE_MS), now))) continue;
        const result = await this.checkItem(item).catch(async (error: unknown) => {
          // Whatever went wrong (the database, say), the item is asked about again later and the pass goes on.
          this.deps.log.error('reconcile_item_failed', { kind: item.kind, ref: item.refId, error });
          await this.backOff(item, error instanceof Error ? error.message : String(error)).catch(() => undefined);
          return null;
        });
        progress();
        if (!result) continue;
        const { finding, status } = result;
        if (finding) {
          summary.checked += 1;
          count(finding, 'checked');
          if (finding.events.length) { summary.found += 1; count(finding, 'found'); }
          if (finding.outcome === 'changed') { summary.fixed += 1; count(finding, 'fixed'); }
          if (finding.outcome === 'unreachable') {
            summary.unreachable += 1;
            count(finding, 'unreachable');
            if (finding.rateLimited) paused.add(item.provider);
          }
        }
        if (status === 'CLOSED') summary.closed += 1;
        if (status === 'EXPIRED') summary.expired += 1;
      }
    } finally {
      await this.repo.count([...counts].map(([key, n]) => {
        const [provider, kind, outcome] = key.split('|');
        return { provider, kind, outcome, count: n };
      })).catch((error: unknown) => this.deps.log.warn('reconcile_counts_failed', { error }));
    }
    return summary;
  }

  /** Asks about one due item and plans its next check; the item's status after it. */
  private async checkItem(item: ReconcileItemRecord): Promise<{ finding: Finding | null; status: 'OPEN' | 'CLOSED' | 'EXPIRED' }> {
    const settings = await this.deps.settings.current();
    const target = await this.targetOf(item, settings);
    const now = () => this.deps.clock();
    if (!target) {
      await this.repo.checked(item.id, { status: 'CLOSED', nextAt: null, checks: item.checks, failures: 0, state: null, error: null }, now());
      return { finding: null, status: 'CLOSED' };
    }
    const finding = await this.check(target, { dryRun: false });
    if (finding.outcome === 'unreachable') {
      const status = await this.backOff(item, finding.error ?? 'unreachable', finding.providerState);
      return { finding, status };
    }
    const still = await this.targetOf(item, settings);
    const checks = item.checks + 1;
    if (!still || finding.final) {
      await this.repo.checked(item.id, { status: 'CLOSED', nextAt: null, checks, failures: 0, state: finding.providerState, error: null }, now());
      return { finding, status: 'CLOSED' };
    }
    const next = this.schedule.next(item.openedAt, checks, now());
    const status = next ? 'OPEN' : 'EXPIRED';
    await this.repo.checked(item.id, { status, nextAt: next?.at ?? null, checks, failures: 0, state: finding.providerState, error: null }, now());
    return { finding, status };
  }

  /** The provider could not be asked: again after a growing wait, unless the item's schedule has ended by then. */
  private async backOff(item: ReconcileItemRecord, error: string, state: string | null = null): Promise<'OPEN' | 'EXPIRED'> {
    const now = this.deps.clock();
    const failures = item.failures + 1;
    const at = new Date(now.getTime() + backoffSeconds(failures) * 1000);
    const over = at.getTime() > this.schedule.end(item.openedAt).getTime();
    await this.repo.checked(item.id, { status: over ? 'EXPIRED' : 'OPEN', nextAt: over ? null : at, checks: item.checks, failures, state, error }, now);
    return over ? 'EXPIRED' : 'OPEN';
  }

  /** The item's payment, agreement or order as it is now, or null when it is no longer open. */
  private async targetOf(item: Pick<ReconcileItemRecord, 'kind' | 'refId'>, settings: ShopSettings): Promise<ReconcileTarget | null> {
    if (item.kind === 'payment') {
      const payment = await this.repo.payment(item.refId);
      return payment && paymentIsOpen(payment.status, payment.retryPlanned) ? { kind: 'payment', provider: payment.provider, ref: payment.id, payment } : null;
    }
    if (item.kind === 'agreement') {
      const agreement = await this.repo.agreement(item.refId);
      return agreement && agreementIsOpen(agreement.status, agreement.provider, agreement.disableReason) ? { kind: 'agreement', provider: agreement.provider, ref: agreement.id, agreement } : null;
    }
    const order = await this.deps.orders.findById(item.refId, settings);
    if (!order || !awaitsCardGateway(order) || (await this.repo.orderHasPayment(order.id))) return null;
    return { kind: 'order', provider: 'card_gateway', ref: order.id, handle: cardGatewayHandle(order, settings), status: order.status };
  }

  // --------------------------------------------------------------------------------------------------------------
  // Finding what opened or changed

  /**
   * Puts what opened or changed since the last look on the schedule; closes what became final. Returns how many
   * it (re)opened. Each table is read from its mark on: payments and agreements along their `updated_at` index,
   * WooCommerce orders along the authoritative store's (see `changedOrders`). A row whose item already opened at
   * or after its last change, or a final one whose item is closed or that has none, writes nothing: a pass over
   * what did not change writes no row, the marks included.
   */
  async discover(now: Date): Promise<number> {
    const floor = new Date(now.getTime() - this.schedule.spanSeconds * 1000 - 86_400_000);
    let opened = 0;
    const payments = (rows: Seen<PaymentTarget>[]) => this.putOnSchedule('payment', rows, (p) => paymentIsOpen(p.status, p.retryPlanned), now);
    const agreements = (rows: Seen<AgreementTarget>[]) => this.putOnSchedule('agreement', rows, (a) => agreementIsOpen(a.status, a.provider, a.disableReason), now);
    opened += await this.sweep('payments', now, floor, (since, afterId) => this.repo.changedPayments(since, afterId, DISCOVERY_PAGE), (row) => row.updatedAt, payments);
    opened += await this.sweep('agreements', now, floor, (since, afterId) => this.repo.changedAgreements(since, afterId, DISCOVERY_PAGE), (row) => row.updatedAt, agreements);

    if (this.deps.configured.includes('card_gateway') && now.getTime() - this.ordersLookedAt >= ORDER_DISCOVERY_INTERVAL_MS) {
      const settings = await this.deps.settings.current();
      // Each store has its own mark: its scan goes along its own column.
      opened += await this.sweep(settings.hpos ? 'orders_hpos' : 'orders_posts', now, floor,
        (since, afterId) => this.repo.changedOrders(settings, since, afterId, floor, DISCOVERY_PAGE), (row) => row.modifiedAt,
        async (rows: ChangedOrder[]) => {
          let count = 0;
          for (const order of rows) {
            // `wanted` leaves out an order whose item opened at or after its last change, as well as any not awaiting the gateway.
            if (!order.wanted) continue;
            await this.repo.open('order', order.id, 'card_gateway', order.modifiedAt, this.schedule.first(order.modifiedAt), now);
            count += 1;
          }
          return count;
        });
      this.ordersLookedAt = now.getTime();
    }
    return opened;
  }

  /** Open rows the schedule does not have since their last change are (re)opened; final ones whose item is not closed are closed. */
  private async putOnSchedule<T extends { id: number; provider: Provider; updatedAt: Date; item: ScheduledItem | null }>(
    kind: ReconcileKind, rows: T[], isOpen: (row: T) => boolean, now: Date,
  ): Promise<number> {
    const closed: number[] = [];
    let opened = 0;
    for (const row of rows) {
      if (!isOpen(row) || !this.deps.configured.includes(row.provider)) {
        if (row.item && row.item.status !== 'CLOSED') closed.push(row.id);
        continue;
      }
      if (row.item && row.item.openedAt.getTime() >= row.updatedAt.getTime()) continue;
      await this.repo.open(kind, row.id, row.provider, row.updatedAt, this.schedule.first(row.updatedAt), now);
      opened += 1;
    }
    await this.repo.closeRefs(kind, closed, now);
    return opened;
  }

  /**
   * Reads a table from its mark on (less an overlap: a transaction stamps its rows before it commits), page by page
   * in the order of the change, and hands each page to `handle`; the mark is written only when it moved.
   */
  private async sweep<T extends { id: number }>(
    name: string, now: Date, floor: Date, read: (since: string, afterId: number) => Promise<T[]>, changedAt: (row: T) => Date,
    handle: (rows: T[]) => Promise<number>,
  ): Promise<number> {
    const mark = await this.repo.watermark(name);
    const markAt = mark ? new Date(`${mark.at.replace(' ', 'T')}Z`).getTime() - DISCOVERY_OVERLAP_MS : floor.getTime();
    let since = gmtDateTimeMs(new Date(Math.max(floor.getTime(), Number.isFinite(markAt) ? markAt : floor.getTime())));
    let afterId = 0;
    // A row stamped ahead of this clock (a plugin's local time in a GMT column, a clock ahead) does not take the mark
    // past now: what changes meanwhile would be passed over. Such a row is read again each pass until now passes it.
    const nowAt = gmtDateTimeMs(now);
    let seen: { at: string; id: number } | null = null;
    let opened = 0;
    for (let page = 0; page < DISCOVERY_MAX_PAGES; page += 1) {
      const rows = await read(since, afterId);
      opened += await handle(rows);
      for (const row of rows) {
        since = gmtDateTimeMs(changedAt(row));
        afterId = row.id;
        if (since <= nowAt) seen = { at: since, id: afterId };
      }
      if (rows.length < DISCOVERY_PAGE) break;
    }
    if (seen && (!mark || seen.at > mark.at || (seen.at === mark.at && seen.id > mark.id))) await this.repo.advanceWatermark(name, seen, now);
    return opened;
  }

  // --------------------------------------------------------------------------------------------------------------
  // The operator's reconcile: everything open about one order, or everything open

  async targets(scope: { orderId: number } | 'all'): Promise<ReconcileTarget[]> {
    const settings = await this.deps.settings.current();
    const orderId = scope === 'all' ? undefined : scope.orderId;
    const payments = await this.repo.openPayments(orderId);
    let agreements: AgreementTarget[];
    if (orderId === undefined) {
      agreements = await this.repo.openAgreements();
    } else {
      const order = await this.deps.orders.findById(orderId, settings);
      const subscriptionId = Number(order?.meta._subscription_renewal) || null;
      const [subscription] = subscriptionId ? await this.deps.orders.findManyByIds([subscriptionId], settings, 'shop_subscription') : [];
      agreements = await this.repo.openAgreements({ orderId, subscriptionId, walletAgreement: subscription?.meta._agreement_id || null });
    }
    const orders = await this.repo.ordersAwaitingGateway(settings, null, 10_000, orderId);
    const targets: ReconcileTarget[] = [
      ...payments.map((payment) => ({ kind: 'payment' as const, provider: payment.provider, ref: payment.id, payment })),
      ...agreements.map((agreement) => ({ kind: 'agreement' as const, provider: agreement.provider, ref: agreement.id, agreement })),
    ];
    for (const candidate of orders) {
      const target = await this.targetOf({ kind: 'order', refId: candidate.id }, settings);
      if (target) targets.push(target);
    }
    return targets;
  }

  /** Whether the order exists at all (for the operator's `--order`). */
  async orderExists(orderId: number): Promise<boolean> {
    const settings = await this.deps.settings.current();
    return (await this.deps.orders.findById(orderId, settings)) !== null;
  }

  /** The totals, open items and the oldest open item's age, for /metrics. */
  metrics(): Promise<ReconcileMetrics> {
    return this.repo.metrics(this.deps.clock());
  }

  /** Counts a run of the operator's command in the totals /metrics shows (not for a dry run). */
  async countFindings(findings: Finding[]): Promise<void> {
    const rows: { provider: string; kind: string; outcome: string; count: number }[] = [];
    for (const finding of findings) {
      const base = { provider: finding.provider, kind: finding.kind, count: 1 };
      rows.push({ ...base, outcome: 'checked' });
      if (finding.events.length) rows.push({ ...base, outcome: 'found' });
      if (finding.outcome === 'changed') rows.push({ ...base, outcome: 'fixed' });
      if (finding.outcome === 'unreachable') rows.push({ ...base, outcome: 'unreachable' });
    }
    await this.repo.count(rows);
  }

  // --------------------------------------------------------------------------------------------------------------
  // Asking, and handing the answer to the handlers

  /**
   * Asks the provider about one target and, unless `dryRun`, hands each event to the webhook handler. A dry
   * run only reads (GETs) and writes nothing anywhere.
   */
  async check(target: ReconcileTarget, options: { dryRun: boolean }): Promise<Finding> {
    const base = describe(target);
    let read: { state: string | null; events: SyntheticEvent[]; final: boolean };
    try {
      read = await this.ask(target);
    } catch (error) {
      if (!(error instanceof Unreachable)) throw error;
      return { ...base, providerState: null, outcome: 'unreachable', events: [], notes: [], final: false, error: error.message, rateLimited: error.rateLimited };
    }
    const finding: Finding = {
      ...base, providerState: read.state, outcome: read.events.length ? (options.dryRun ? 'would_change' : 'unchanged') : 'unchanged',
      events: read.events.map((event) => event.type), notes: [], final: read.final, error: null, rateLimited: false,
    };
    if (!options.dryRun && !read.events.length && target.kind === 'payment' && target.payment.status === null && STILL_TO_TAKE.includes(read.state ?? '')) {
      // A charge the provider will still take, for a renewal paid another way meanwhile: cancelled before it is.
      const cancelled = await this.deps.unwanted?.cancelIfUnwanted(target.payment.id);
      if (cancelled?.kind === 'cancelled') return { ...finding, outcome: 'changed', notes: [cancelled.note], final: true };
    }
    if (options.dryRun || !read.events.length) return finding;
    for (const event of read.events) {
      let outcome: EventOutcome;
      try {
        outcome = await this.handle(event);
      } catch (error) {
        if (!(error instanceof ProviderUnavailableError)) throw error;
        const message = error.message;
        return { ...finding, outcome: 'unreachable', error: message, rateLimited: isRateLimited(undefined, undefined, message) };
      }
      finding.notes.push(`${event.type}: ${outcome.status} (${outcome.note})`);
      if (outcome.status === 'PROCESSED') finding.outcome = 'changed';
    }
    return finding;
  }

  private async ask(target: ReconcileTarget): Promise<{ state: string | null; events: SyntheticEvent[]; final: boolean }> {
    if (target.kind === 'agreement') return this.askAgreement(target.agreement);
    if (target.kind === 'order') {
      const read = await this.readInvoice(target.handle);
      if (!read) return { state: 'unknown', events: [], final: false };
      const events = cardGatewayInvoiceEvents(null, read.state, read.refunded).map((type) => ({ provider: 'card_gateway' as const, type, invoice: target.handle }));
      return { state: read.state, events, final: read.state === 'cancelled' };
    }
    const { payment } = target;
    if (payment.provider === 'card_gateway') {
      const read = await this.readInvoice(payment.externalId);
      if (!read) return { state: 'unknown', events: [], final: false };
      const events = cardGatewayInvoiceEvents(payment.status, read.state, read.refunded).map((type) => ({ provider: 'card_gateway' as const, type, invoice: payment.externalId }));
      return { state: read.state, events, final: read.state === 'cancelled' && !events.length };
    }
    const agreementId = payment.agreementExternalId;
    if (!agreementId) return { state: null, events: [], final: true };
    const result = await this.deps.mobileWallet.getCharge(agreementId, payment.externalId);
    if (!result.ok && result.kind === 'not_found') return { state: 'unknown', events: [], final: false };
    if (!result.ok) throw unreachable(`reading charge ${payment.externalId}`, result);
    const events = walletChargeEvents(payment.status, result.value.status).map((type) => ({ provider: 'mobile_wallet' as const, type, agreementId, chargeId: payment.externalId }));
    return { state: result.value.status, events, final: false };
  }

  /** The invoice's state (the charge's, when the gateway knows no invoice of that handle); null when it knows neither. */
  private async readInvoice(handle: string): Promise<{ state: string; refunded: boolean } | null> {
    const invoice = await this.deps.cardGateway.getInvoice(handle);
    if (invoice.ok) return { state: invoice.value.state, refunded: (invoice.value.refunded_amount ?? 0) > 0 || (invoice.value.credit_notes ?? []).length > 0 };
    if (invoice.kind !== 'not_found') throw unreachable(`reading invoice ${handle}`, invoice);
    const charge = await this.deps.cardGateway.getCharge(handle);
    if (charge.ok) return { state: charge.value.state, refunded: (charge.value.refunded_amount ?? 0) > 0 };
    if (charge.kind !== 'not_found') throw unreachable(`reading charge ${handle}`, charge);
    return null;
  }

  private async askAgreement(agreement: AgreementTarget): Promise<{ state: string | null; events: SyntheticEvent[]; final: boolean }> {
    if (agreement.provider === 'mobile_wallet') {
      const result = await this.deps.mobileWallet.getAgreement(agreement.externalId);
      if (!result.ok && result.kind === 'not_found') return { state: 'unknown', events: [], final: false };
      if (!result.ok) throw unreachable(`reading agreement ${agreement.externalId}`, result);
      const events = walletAgreementEvents(agreement.status, result.value.status).map((type) => ({ provider: 'mobile_wallet' as const, type, agreementId: agreement.externalId }));
      return { state: result.value.status, events, final: false };
    }
    const result = await this.deps.cardGateway.getPaymentMethod(agreement.externalId);
    if (!result.ok && result.kind !== 'not_found') throw unreachable(`reading payment method ${agreement.externalId}`, result);
    const state = result.ok ? result.value.state : 'deleted';
    const events = cardPaymentMethodEvents(agreement.status, state, agreement.disableReason)
      .map((type) => ({ provider: 'card_gateway' as const, type, paymentMethod: agreement.externalId, customer: result.ok ? result.value.customer : agreement.customerHandle }));
    return { state, events, final: false };
  }

  /** The event as the provider's webhook would have carried it; the handler reads the provider back before it acts. */
  private handle(event: SyntheticEvent): Promise<EventOutcome> {
    const id = `reconcile-${Date.now().toString(36)}`;
    if (event.provider === 'card_gateway') {
      // No timestamp: the provider's own time of the payment comes from the invoice, never from the time of asking.
      const envelope = { id, eventId: id, timestamp: '', signature: '', supported: true as const };
      const built: CardGatewayEvent = 'invoice' in event
        ? { ...envelope, eventType: event.type as CardGatewayInvoiceEventType, invoice: event.invoice }
        : { ...envelope, eventType: event.type as CardGatewayPaymentMethodEventType, paymentMethod: event.paymentMethod, ...(event.customer ? { customer: event.customer } : {}) };
      return this.deps.cardGatewayHandler.handle(built);
    }
    const built: MobileWalletEvent = 'chargeId' in event
      ? { supported: true, eventType: event.type as MobileWalletChargeEventType, agreementId: event.agreementId, chargeId: event.chargeId }
      : { supported: true, eventType: event.type as MobileWalletAgreementEventType, agreementId: event.agreementId };
    return this.deps.mobileWalletHandler.handle(built);
  }
}

function describe(target: ReconcileTarget): Pick<Finding, 'kind' | 'provider' | 'id' | 'externalId' | 'orderId' | 'localStatus'> {
  if (target.kind === 'payment') {
    const { payment } = target;
    return { kind: 'payment', provider: payment.provider, id: payment.id, externalId: payment.externalId, orderId: payment.orderId, localStatus: payment.status };
  }
  if (target.kind === 'agreement') {
    const { agreement } = target;
    return { kind: 'agreement', provider: agreement.provider, id: agreement.id, externalId: agreement.externalId, orderId: null, localStatus: agreement.status };
  }
  return { kind: 'order', provider: 'card_gateway', id: target.ref, externalId: target.handle, orderId: target.ref, localStatus: target.status };
}

/** An order awaiting payment through the card gateway (one of its WooCommerce gateways, or its handle in `_reepay_order`). */
export function awaitsCardGateway(order: ShopOrder): boolean {
  return order.type === 'shop_order' && AWAITING_STATUSES.includes(order.status)
    && (order.paymentMethod.startsWith(CARD_GATEWAY_METHOD_PREFIX) || Boolean(order.meta._reepay_order));
}

/** The order's invoice handle as the gateway's WooCommerce plugin makes it: `_reepay_order`, else `order-<order number>`. */
export function cardGatewayHandle(order: ShopOrder, settings: ShopSettings): string {
  return order.meta._reepay_order || `order-${displayedOrderNumber(order, settings.orderNumbers)}`;
}
