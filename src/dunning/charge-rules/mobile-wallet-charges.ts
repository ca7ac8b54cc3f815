import crypto from 'node:crypto';
import type { RetryPlan } from '../../../entities';
import type { NewCharge } from '../../data-access/charge-ledger-repository';
import type { DunningCaseRepository } from '../../data-access/dunning-case-repository';
import type { OrderWriteRepository } from '../../data-access/order-write-repository';
import type { PaymentRecord, PaymentRepository } from '../../data-access/payment-repository';
import type { RetryRecord } from '../../data-access/retry-repository';
import type { ShopSettings } from '../../data-access/shop-settings-repository';
import type { MobileWalletAgreement, MobileWalletCharge, MobileWalletClient } from '../../payments/providers/mobile-wallet/client';
import type { PaymentFailure } from '../../payments/failed-payment-handling';
import type { ShopOrder } from '../../shop/order';
import { gmtDateTime, parseGmtDateTime } from '../../shop/shop-time';
import { subscriptionPaymentMethod } from '../dunning';
import { WALLET_CREATION_REFUSED } from '../decline-policy';
import { cannotRead, DAY_MS, WALLET_DUE_IN_DAYS, readProblem, type ChargeRequest, type ChargeResult, type ChargeTarget, type ProviderChargeRules, type ProviderState, type Refusal, type UnderWay } from './charge-rules';

/** Wallet charge statuses in which the wallet may still take the money: never charged again on top. */
const WALLET_STILL_TRYING = ['PENDING', 'DUE', 'PROCESSING', 'UNKNOWN'];
/**
 * The most days the wallet retries a charge itself: "The maximum number of retryDays is 14" ("Charge retries",
 * vippsas/vipps-recurring-api recurring-api-guide.md; docs/openapi.yaml CreateChargeV3.retryDays maximum 14).
 */
export const WALLET_MAX_RETRY_DAYS = 14;
/** The fewest asked for when the renewal's window allows: "retryDays is capped at 14. Use at least 2" (vippsas/agent-toolkit plugins/vipps/skills/recurring/SKILL.md). */
export const WALLET_MIN_RETRY_DAYS = 2;

/**
 * The `retryDays` of an attempt's wallet charge due on `due` (YYYY-MM-DD): the wallet retries it itself, daily from
 * `due` through `retryDays` days after it, telling the customer in the app each time, and its outcome is final
 * after 00:00 UTC the day after the last ("Charge times", "Charge retries", recurring-api-guide.md).
 * An attempt of the plan asks for the wallet's whole window (`wanted` 14): the wallet's documents ask merchants to
 * let it do the retrying rather than loop themselves, and a window cut to what was left of DUNNING_PLAN (4 days
 * for the first attempt) recovered less than WooCommerce's plain timing in `npm run bench:recovery` (the customer
 * who fixes the app a week later was never tried again). Any other attempt (a staff Charge now, a technical
 * error's) asks for the toolkit's minimum. Either way the window never passes the case's deadline once the customer
 * has been asked: then as many days as fit, down to 0 (one day of tries).
 */
export function walletRetryDays(due: string, wanted: number, deadline: Date | null): number {
  const dueMs = Date.parse(`${due.slice(0, 10)}T00:00:00Z`);
  let days = Math.min(WALLET_MAX_RETRY_DAYS, Math.max(0, wanted));
  if (deadline) days = Math.min(days, Math.floor((deadline.getTime() - dueMs) / DAY_MS) - 1);
  return Math.max(0, days);
}

/** How many days of its own retries an attempt of `plan` asks the wallet for (walletRetryDays' `wanted`). */
export function walletRetryDaysWanted(plan: RetryPlan): number {
  return plan === 'soft' || plan === 'payday' ? WALLET_MAX_RETRY_DAYS : WALLET_MIN_RETRY_DAYS;
}

/**
 * When the wallet stops retrying a charge itself: it retries daily through `retryDays` days after `due`, and
 * its outcome is final after 00:00 UTC the next day. A charge without a readable due date is looked at
 * again in a day.
 */
export function walletRetryWindowEnd(charge: Pick<MobileWalletCharge, 'due' | 'retryDays'>, now: Date): Date {
  const due = charge.due ? Date.parse(`${charge.due.slice(0, 10)}T00:00:00Z`) : NaN;
  if (Number.isNaN(due)) return new Date(now.getTime() + DAY_MS);
  const end = new Date(due + ((charge.retryDays ?? 0) + 1) * DAY_MS);
  return end.getTime() > now.getTime() ? end : new Date(now.getTime() + DAY_MS);
}

/**
 * The wallet's `orderId` (and Idempotency-Key) of an attempt: at most 40 of `[a-zA-Z0-9-]` (the key's limit
 * is the tighter: 1-40 characters; orderId: 50), unique per merchant serial number across all of the
 * merchant's shops, so it carries a tag of the shop (its site URL's hash) before the attempt's key.
 */
export function walletRetryOrderId(settings: Pick<ShopSettings, 'siteUrl'>, attemptKey: string): string {
  const tag = crypto.createHash('sha256').update(settings.siteUrl.trim().toLowerCase()).digest('hex').slice(0, 8);
  const id = `${tag}-${attemptKey}`.replace(/[^a-zA-Z0-9-]/g, '-');
  return id.length <= 40 ? id : `${tag}-${crypto.createHash('sha256').update(attemptKey).digest('hex').slice(0, 31)}`;
}

/**
 * What a wallet agreement allows to be charged, as one comparable text: its pricing (`type`, `amount`,
 * `suggestedMaxAmount`, `maxAmount`, `currency`; "Amount limits", recurring-api-guide.md). A customer who raises the
 * maximum in the app, or a shop that updates the agreement's price, changes it.
 */
export function agreementTerms(agreement: Pick<MobileWalletAgreement, 'pricing'>): string {
  const pricing = agreement.pricing ?? {};
  return JSON.stringify(['type', 'amount', 'suggestedMaxAmount', 'maxAmount', 'currency'].map((key) => pricing[key] ?? null));
}

/** The mobile wallet's rules for a dunning charge (Vipps MobilePay Recurring: charges on an agreement, due ahead). */
export class MobileWalletCharges implements ProviderChargeRules {
  constructor(private readonly deps: {
    mobileWallet: MobileWalletClient;
    payments: PaymentRepository;
    orderWrites: OrderWriteRepository;
    cases: DunningCaseRepository;
    clock: () => Date;
  }) {}

  async stateAtProvider(original: PaymentRecord, meta: Record<string, string>): Promise<ProviderState> {
    if (!meta.agreement_id) return { kind: 'unpaid' };
    const result = await this.deps.mobileWallet.getCharge(meta.agreement_id, original.externalId);
    if (!result.ok) return result.kind === 'not_found' ? { kind: 'unpaid' } : readProblem(`reading charge ${original.externalId}`, result);
    if (['CHARGED', 'PARTIALLY_CAPTURED'].includes(result.value.status)) return { kind: 'paid', status: 'CAPTURED' };
    if (result.value.status === 'RESERVED') return { kind: 'paid', status: 'AUTHORIZED' };
    return { kind: 'unpaid' };
  }

  /** The failed payment's agreement; after a new payment method, the one the subscription is switched to, or its newest active one. */
  async target(retry: Pick<RetryRecord, 'plan' | 'subscriptionId'>, _original: PaymentRecord, meta: Record<string, string>, settings: ShopSettings): Promise<ChargeTarget> {
    if (retry.plan === 'new_method') {
      // The agreement the subscription is switched to (the wallet plugin's `_agreement_id`), announced or not.
      const switched = await subscriptionPaymentMethod(this.deps.orderWrites, this.deps.cases.pool, retry.subscriptionId, 'mobile_wallet', settings);
      if (switched && switched !== meta.agreement_id) return { agreement_id: switched };
      const agreement = await this.deps.payments.activeAgreementOfSubscription('mobile_wallet', retry.subscriptionId);
      if (agreement) return { agreement_id: agreement.externalId };
    }
    // The failed payment's agreement; a renewal that failed on the card, its subscription since switched to the
    // wallet, has none: the agreement the subscription names.
    if (meta.agreement_id) return { agreement_id: meta.agreement_id };
    const named = await subscriptionPaymentMethod(this.deps.orderWrites, this.deps.cases.pool, retry.subscriptionId, 'mobile_wallet', settings);
    return { agreement_id: named ?? undefined };
  }

  hasPaymentMethod(target: ChargeTarget): boolean {
    return Boolean(target.agreement_id);
  }

  /**
   * Our own charges still open, and the charge the shop's own wallet plugin made for the order (`_charge_id`): one
   * the wallet still holds (`DUE` through its `retryDays`, until its window ends), or one it has taken (until the
   * shop shows it).
   */
  async underWay(order: ShopOrder, _original: PaymentRecord, originalMeta: Record<string, string>, settings: ShopSettings, now: Date): Promise<UnderWay | Refusal | null> {
    const known = await this.deps.payments.listByOrder(order.id);
    const charges = known.filter((payment) => payment.provider === 'mobile_wallet' && payment.status === null && payment.meta.agreement_id)
      .map((payment) => ({ agreementId: payment.meta.agreement_id, chargeId: payment.externalId, whose: 'our' }));
    const shopCharge = (await this.deps.orderWrites.getMeta(this.deps.cases.pool, order.id, '_charge_id', settings))?.trim();
    const agreementOfShop = originalMeta.agreement_id || (await this.deps.orderWrites.getMeta(this.deps.cases.pool, order.id, '_agreement_id', settings))?.trim();
    if (shopCharge && agreementOfShop && !known.some((payment) => payment.externalId === shopCharge && payment.status !== null)) {
      charges.push({ agreementId: agreementOfShop, chargeId: shopCharge, whose: "the shop's" });
    }
    for (const { agreementId, chargeId, whose } of charges) {
      const read = await this.deps.mobileWallet.getCharge(agreementId, chargeId);
      if (!read.ok) {
        if (read.kind === 'not_found') continue;
        return cannotRead(`reading charge ${chargeId}`, read, now);
      }
      if (['CHARGED', 'RESERVED', 'PARTIALLY_CAPTURED'].includes(read.value.status)) {
        return { kind: 'wait', cause: 'pending', until: new Date(now.getTime() + DAY_MS / 24), why: `${whose} charge ${chargeId} is ${read.value.status} at the wallet: the renewal is paid, waiting for the shop to show it; nothing charged on top` };
      }
      if (!WALLET_STILL_TRYING.includes(read.value.status)) continue;
      const until = walletRetryWindowEnd(read.value, now);
      return { kind: 'wait', cause: 'wallet_retrying', until, why: `charge ${chargeId} is ${read.value.status} at the wallet, which retries it itself until ${gmtDateTime(until)} UTC; nothing charged on top` };
    }
    return null;
  }

  /**
   * The charge ID is the attempt's key with the shop's tag; only an ACTIVE agreement is charged (a stopped or expired
   * one is the customer's to replace). It is one charge with `retryDays` (walletRetryDays), which the wallet retries
   * itself as its documents ask; it stays the renewal's one open charge in the ledger until the wallet ends it.
   */
  async newCharge(request: ChargeRequest): Promise<{ kind: 'charge'; charge: NewCharge } | { kind: 'no_charge'; result: ChargeResult }> {
    const { target, number, settings, base, key } = request;
    const agreementId = target.agreement_id;
    const chargeId = walletRetryOrderId(settings, key);
    if (!agreementId) return { kind: 'no_charge', result: { kind: 'declined', externalId: chargeId, failure: { code: 'no_agreement', description: 'the payment has no wallet agreement to charge', state: 'hard_declined' } } };
    const agreement = await this.deps.mobileWallet.getAgreement(agreementId);
    if (!agreement.ok && agreement.kind !== 'not_found') return { kind: 'no_charge', result: readProblem(`reading agreement ${agreementId}`, agreement) };
    const agreementStatus = agreement.ok ? agreement.value.status : 'UNKNOWN';
    if (agreementStatus !== 'ACTIVE') {
      return { kind: 'no_charge', result: { kind: 'declined', externalId: chargeId, failure: { code: 'no_agreement', description: `the wallet agreement ${agreementId} is ${agreementStatus}`, state: 'hard_declined' } } };
    }
    const now = this.deps.clock();
    const due = new Date(now.getTime() + WALLET_DUE_IN_DAYS * DAY_MS).toISOString().slice(0, 10);
    return { kind: 'charge', charge: {
      ...base, externalId: chargeId, idempotencyKey: chargeId, paymentMethod: agreementId, customerHandle: null,
      due, retryDays: await this.retryDaysOf(request, due), description: `Renewal order ${number}`.slice(0, 45),
    } };
  }

  /**
   * The wallet refuses to create a charge above the agreement's maximum (the problem `charge-amount-too-high`, which the
   * ledger answers as the decline `charge_amount_too_high`; a FAILED charge read back carries `wallet_retried` when the
   * wallet had retried it, so a bare one is that refusal): nothing was made, and nobody told the customer. It gets the
   * state `creation_refused`, and the agreement's terms as the wallet states them now (read once, right after the
   * refusal) are kept with it: the same agreement is charged that amount again only once they, or the amount, change.
   */
  async declineOfRequest(failure: PaymentFailure, target: ChargeTarget): Promise<{ failure: PaymentFailure; meta: Record<string, string> }> {
    if (failure.code !== 'charge_amount_too_high' || failure.state || !target.agreement_id) return { failure, meta: {} };
    const agreement = await this.deps.mobileWallet.getAgreement(target.agreement_id);
    // Unreadable now: the terms are read when the renewal is looked at next (SwitchedPaymentMethods), and kept from then.
    return { failure: { ...failure, state: WALLET_CREATION_REFUSED }, meta: agreement.ok ? { refused_agreement_terms: agreementTerms(agreement.value) } : {} };
  }

  /** The window of the attempt's charge: the wallet's whole window for an attempt of the plan, never past the case's deadline. */
  private async retryDaysOf(request: ChargeRequest, due: string): Promise<number> {
    const found = await this.deps.cases.ofOrderUnlocked(request.order.id);
    return walletRetryDays(due, walletRetryDaysWanted(request.retry.plan), parseGmtDateTime(found?.deadlineAt ?? null));
  }
}
