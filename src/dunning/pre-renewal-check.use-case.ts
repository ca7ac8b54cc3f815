import type { Provider } from '../../entities';
import type { CardExpiryReminderRepository, SubscriptionFacts } from '../data-access/card-expiry-reminder-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { PreRenewalCheckRepository } from '../data-access/pre-renewal-check-repository';
import { renewalKey } from '../data-access/pre-renewal-check-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import { companionSendsPreRenewal, type WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import type { Logger } from '../logger';
import type { CardGatewayClient } from '../payments/providers/card-gateway/client';
import type { MobileWalletClient } from '../payments/providers/mobile-wallet/client';
import { Pacer } from '../reconciliation/pacer';
import { noteLanguage } from '../shop/order-note-words';
import { providerOfGateway } from '../shop/payment-gateways';
import { NEXT_PAYMENT_META } from '../shop/subscription';
import { localDateTime, type ShopTimeZone } from '../shop/shop-time';
import { subscriptionPaymentMethod } from './dunning';

const DAY_MS = 86_400_000;
/** Subscriptions whose facts are read at once. */
const BATCH = 100;

export interface PreRenewalCheckSettings {
  /** PRE_RENEWAL_CHECK_DAYS: days before the renewal; 0: off. */
  days: number;
  /** PRE_RENEWAL_CHECK_INTERVAL_SECONDS: a pass starts at most this often (in this process). */
  intervalSeconds: number;
  /** Provider reads per second at most (CARD_EXPIRY_REMINDER_MAX_PER_SECOND). */
  maxPerSecond: number;
}

export interface PreRenewalRunSummary {
  pass: 'off' | 'not_due' | 'finished';
  /** Active, automatically renewing subscriptions with a renewal inside the window. */
  renewals: number;
  /** Payment methods read at the providers. */
  asked: number;
  /** Customers asked for another payment method (e-mails handed to WooCommerce). */
  notified: number;
  /** Renewals asked about whose subscription now names a payment method that works (saved before failure). */
  fixed: number;
  /** Could not be judged this pass (provider away or not knowing the method, no method named, the database). */
  notChecked: number;
}

/**
 * What a provider says of a payment method, as far as a renewal is concerned: null when it will work, else the
 * finding (for the row, the note and the log).
 *
 * Card gateway (Frisbii/Reepay), the payment method object's `state` ∈ active | inactivated | failed | pending |
 * deleted (billwerk-sdk-php src/Enum/PaymentMethodStateEnum.php, Model/PaymentMethod/PaymentMethodModel.php;
 * ../shared/reference/payment-providers.md 1.8). Only `active` is charged: the gateway refuses a `failed` method
 * with code 147 and any other with 42. The network (EMV) token's status shows in that state: the gateway sends
 * `customer_payment_method_failed` when a method "has entered failed state and should not be used again" (a token
 * the scheme suspended or deleted; the charge errors `emv_token_suspended` / `emv_token_deleted`) and
 * `customer_payment_method_reactivated` when a suspended token is resumed (CustomerEventEnum.php); the service's
 * webhook handler keeps its agreements by them, and this check reads the state itself, so a lost event changes
 * nothing. A card the gateway's card updater renewed keeps its id and state `active`
 * (`customer_payment_method_updated`: a new masked card or expiry): simply used, no e-mail.
 *
 * Mobile wallet (Vipps MobilePay Recurring v3), `GET /agreements/{id}` `status` ∈ PENDING | ACTIVE | STOPPED
 * (cannot be reactivated) | EXPIRED (recurring-api-guide; deno-sdk types.gen.ts; reference 2.6): only ACTIVE can
 * be charged.
 */
export function methodFinding(provider: Provider, read: { state?: unknown; status?: unknown }): string | null {
  if (provider === 'card_gateway') return read.state === 'active' ? null : `card_${String(read.state ?? 'unknown')}`;
  return read.status === 'ACTIVE' ? null : `agreement_${String(read.status ?? 'unknown')}`;
}

/**
 * Before the renewal: PRE_RENEWAL_CHECK_DAYS before each active, automatically renewing subscription's next
 * payment, its payment method (the one its renewal is charged on, as the provider's WooCommerce plugin records it:
 * `_reepay_token`, `_agreement_id`) is read at the provider. One that will not work (methodFinding) gets its
 * customer asked once for that renewal, through WooCommerce (`customer_payment_method_needed`, kind
 * `pre_renewal`: the companion's WooCommerce e-mail with the subscription's change-payment-method link), with a
 * note on the subscription; the row (sidecar_pre_renewal_checks, primary key subscription + renewal) and the
 * hand-over are stored in one transaction, so a crash or a second pass cannot ask twice.
 *
 * The renewal itself stays WooCommerce's and the gateway plugin's, on its date: the service charges nothing
 * before it (its dunning acts only on a renewal that failed). When the subscription later names a payment method
 * that works, the row's `fixed_at` is set: a renewal saved before it failed.
 */
export class PreRenewalCheck {
  private readonly pacer: Pacer;
  private lastPassAt: number | null = null;

  constructor(private readonly deps: {
    checks: PreRenewalCheckRepository;
    facts: Pick<CardExpiryReminderRepository, 'subscriptionFacts'>;
    orderWrites: OrderWriteRepository;
    changes: WooCommerceChangeRepository;
    settings: ShopSettingsRepository;
    cardGateway: Pick<CardGatewayClient, 'getPaymentMethod'> | null;
    mobileWallet: Pick<MobileWalletClient, 'getAgreement'> | null;
    config: PreRenewalCheckSettings;
    log: Logger;
    clock: () => Date;
  }) {
    this.pacer = new Pacer(deps.config.maxPerSecond);
  }

  async execute(options: { progress?: () => void; stopRequested?: () => boolean } = {}): Promise<PreRenewalRunSummary> {
    const { config, log, clock } = this.deps;
    const progress = options.progress ?? (() => undefined);
    const stopRequested = options.stopRequested ?? (() => false);
    const summary: PreRenewalRunSummary = { pass: 'off', renewals: 0, asked: 0, notified: 0, fixed: 0, notChecked: 0 };
    if (config.days === 0) return summary;
    const now = clock();
    if (this.lastPassAt !== null && now.getTime() >= this.lastPassAt && now.getTime() - this.lastPassAt < config.intervalSeconds * 1000
      // A card or agreement the service heard stopped working since (the gateway's event, the wallet's stop, in any
      // process) brings the pass forward: a subscription renewing soon on it is asked about at once, not within the hour.
      && !(await this.deps.checks.methodLostSince(new Date(this.lastPassAt)))) {
      return { ...summary, pass: 'not_due' };
    }
    this.lastPassAt = now.getTime();
    const settings = await this.deps.settings.current();
    if (!companionSendsPreRenewal(settings)) {
      log.warn('pre_renewal_check_needs_companion', { message: 'the pre-renewal e-mail is sent by WooCommerce through the companion plugin (version 5 or newer), which this shop does not run; no subscription was checked' });
      return { ...summary, pass: 'finished' };
    }
    const upTo = new Date(now.getTime() + config.days * DAY_MS);
    const ids = await this.deps.orderWrites.findIdsByDateMetaUpTo(NEXT_PAYMENT_META, upTo, 'shop_subscription', settings);
    for (let at = 0; at < ids.length; at += BATCH) {
      const batch = ids.slice(at, at + BATCH);
      const [facts, asked] = await Promise.all([this.deps.facts.subscriptionFacts(batch, settings), this.deps.checks.asked(batch)]);
      for (const id of batch) {
        if (stopRequested()) return { ...summary, pass: 'finished' };
        const subscription = facts.get(id);
        if (!subscription || subscription.status !== 'active' || subscription.manualRenewal || !subscription.nextPayment) continue;
        const next = subscription.nextPayment;
        if (next.getTime() <= now.getTime() || next.getTime() > upTo.getTime()) continue;
        if (subscription.end && subscription.end.getTime() <= next.getTime()) continue;
        const provider = providerOf(subscription);
        if (!provider) continue;
        summary.renewals += 1;
        await this.consider(subscription, provider, next, asked.get(renewalKey(id, next)) ?? null, settings, summary)
          .catch((error: unknown) => {
            summary.notChecked += 1;
            log.warn('pre_renewal_check_not_checked', { subscriptionId: id, reason: 'error', detail: error instanceof Error ? error.message : String(error) });
          });
        progress();
      }
    }
    log.info('pre_renewal_check_pass', { ...summary, pass: 'finished' });
    return { ...summary, pass: 'finished' };
  }

  private async consider(
    subscription: SubscriptionFacts, provider: Provider, next: Date,
    asked: { paymentMethod: string; fixedAt: Date | null } | null, settings: ShopSettings, summary: PreRenewalRunSummary,
  ): Promise<void> {
    const { log } = this.deps;
    const method = await subscriptionPaymentMethod(this.deps.orderWrites, this.deps.checks.pool, subscription.id, provider, settings);
    if (asked && (asked.fixedAt || !method || method === asked.paymentMethod)) return; // asked once; nothing new to see
    if (!method) {
      summary.notChecked += 1;
      log.warn('pre_renewal_check_not_checked', { subscriptionId: subscription.id, provider, reason: 'no_payment_method' });
      return;
    }
    const read = await this.read(provider, method, summary);
    if (!read.ok) {
      summary.notChecked += 1;
      log.warn('pre_renewal_check_not_checked', { subscriptionId: subscription.id, provider, paymentMethod: method, reason: read.reason });
      return;
    }
    if (asked) {
      // The customer named another payment method after the notice: saved before the renewal failed, if it works.
      if (!read.finding && await this.deps.checks.markFixed(subscription.id, next, method, this.deps.clock())) {
        summary.fixed += 1;
        log.info('pre_renewal_check_fixed', { subscriptionId: subscription.id, provider, paymentMethod: method, renewal: next.toISOString() });
      }
      return;
    }
    if (!read.finding) return;
    const finding = read.finding;
    const sent = await this.deps.orderWrites.transaction(async (db) => {
      const at = this.deps.clock();
      const locked = await this.deps.orderWrites.lockStatus(db, subscription.id, settings);
      if (!locked || locked.type !== 'shop_subscription') return false;
      // Changed meanwhile (the customer acted already): the next pass reads the new one.
      if (await subscriptionPaymentMethod(this.deps.orderWrites, db, subscription.id, provider, settings) !== method) return false;
      if (!(await this.deps.checks.record(db, { subscriptionId: subscription.id, nextPayment: next, provider, paymentMethod: method, finding }, at))) return false;
      await this.deps.changes.enqueue(db, {
        op: 'customer_payment_method_needed',
        objectId: subscription.id,
        payload: { kind: 'pre_renewal', order_id: null, reason: null, deadline: null, card_expires: read.cardExpires, masked_card: read.maskedCard },
      }, settings, at);
      await this.deps.orderWrites.addNote(db, subscription.id, preRenewalNote(settings, provider, method, finding, next), settings, at);
      return true;
    });
    if (sent) {
      summary.notified += 1;
      log.info('pre_renewal_check_notified', { subscriptionId: subscription.id, provider, paymentMethod: method, finding, renewal: next.toISOString() });
    }
  }

  private async read(provider: Provider, method: string, summary: PreRenewalRunSummary):
    Promise<{ ok: true; finding: string | null; cardExpires: string | null; maskedCard: string | null } | { ok: false; reason: string }> {
    if (provider === 'card_gateway') {
      if (!this.deps.cardGateway) return { ok: false, reason: 'card gateway not configured' };
      await this.pacer.take();
      summary.asked += 1;
      const result = await this.deps.cardGateway.getPaymentMethod(method);
      if (!result.ok) return { ok: false, reason: `${result.kind} ${result.status ?? ''}`.trim() };
      const card = result.value.card;
      return {
        ok: true, finding: methodFinding(provider, result.value),
        cardExpires: typeof card?.exp_date === 'string' ? card.exp_date : null, maskedCard: typeof card?.masked_card === 'string' ? card.masked_card : null,
      };
    }
    if (!this.deps.mobileWallet) return { ok: false, reason: 'mobile wallet not configured' };
    await this.pacer.take();
    summary.asked += 1;
    const result = await this.deps.mobileWallet.getAgreement(method);
    if (!result.ok) return { ok: false, reason: `${result.kind} ${result.status ?? ''}`.trim() };
    return { ok: true, finding: methodFinding(provider, result.value), cardExpires: null, maskedCard: null };
  }
}

function providerOf(subscription: SubscriptionFacts): Provider | null {
  return providerOfGateway(subscription.paymentMethod);
}

/** The subscription's note: what was found, and that the customer was asked (in the shop's language). */
export function preRenewalNote(readers: { language: string; timeZone: ShopTimeZone }, provider: Provider, method: string, finding: string, renewal: Date): string {
  const date = localDateTime(renewal, readers.timeZone).slice(0, 10);
  const [, state] = /^[a-z]+_(.+)$/.exec(finding) ?? [null, finding];
  if (noteLanguage(readers.language) === 'da') {
    const what = provider === 'card_gateway' ? `Kortet (${method}) kan ikke trækkes: betalingsudbyderen melder det som "${state}"` : `MobilePay-aftalen (${method}) kan ikke trækkes: dens status er ${state}`;
    return `Før fornyelsen ${date}: ${what}. Kunden er bedt om at skifte betalingsmetode (e-mail via WooCommerce med linket til at skifte betalingsmetode).`;
  }
  const what = provider === 'card_gateway' ? `the card (${method}) cannot be charged: the card gateway reports it "${state}"` : `the wallet agreement (${method}) cannot be charged: its status is ${state}`;
  return `Before the renewal on ${date}: ${what}. The customer was asked to change the payment method (e-mail through WooCommerce with the change-payment-method link).`;
}
