import type { NewCharge } from '../../data-access/charge-ledger-repository';
import type { PaymentRecord } from '../../data-access/payment-repository';
import type { RetryRecord } from '../../data-access/retry-repository';
import type { ShopSettings } from '../../data-access/shop-settings-repository';
import type { PaymentFailure } from '../../payments/failed-payment-handling';
import type { ProviderFailure } from '../../payments/providers/card-gateway/client';
import type { Provider } from '../../../entities';
import type { ShopOrder } from '../../shop/order';
import { providerOfGateway } from '../../shop/payment-gateways';

/**
 * What each provider's rules for a dunning charge answer (card-gateway-charges.ts, mobile-wallet-charges.ts): the
 * attempt (run-due-retries.use-case.ts) and staff's outlook (charge-outlook.use-case.ts) ask them the same
 * questions, whichever provider the renewal failed on.
 */
export interface ProviderChargeRules {
  /** The failed payment as the provider sees it now: taken or reserved since (nobody told us), still unpaid, or unknown. */
  stateAtProvider(original: PaymentRecord, meta: Record<string, string>): Promise<ProviderState>;
  /** What an attempt charges: the card (the subscription's own) or the wallet agreement. */
  target(retry: Pick<RetryRecord, 'plan' | 'subscriptionId'>, original: PaymentRecord, meta: Record<string, string>, settings: ShopSettings): Promise<ChargeTarget>;
  /** Whether the target names something the provider could charge at all. */
  hasPaymentMethod(target: ChargeTarget): boolean;
  /** A charge for this renewal already under way at the provider (the service's own or the shop's): nothing is charged on top. */
  underWay(order: ShopOrder, original: PaymentRecord, originalMeta: Record<string, string>, settings: ShopSettings, now: Date): Promise<UnderWay | Refusal | null>;
  /**
   * The charge an attempt asks for, with the identifiers every repeat of its request reuses; or nothing the
   * provider can charge (no card, an agreement that is not active: a decline here), or a read that failed.
   */
  newCharge(request: ChargeRequest): Promise<{ kind: 'charge'; charge: NewCharge } | { kind: 'no_charge'; result: ChargeResult }>;
  /**
   * What a decline of the service's own charge request means beyond the provider's words, and what to keep beside the
   * attempt's payment (the wallet's refusal to create a charge above the agreement's maximum: its state, and the
   * agreement's terms then, so that it is charged again only once they change). Absent: the decline as answered.
   */
  declineOfRequest?(failure: PaymentFailure, target: ChargeTarget): Promise<{ failure: PaymentFailure; meta: Record<string, string> }>;
}

/** What a provider's rules need to write an attempt's charge. */
export interface ChargeRequest {
  retry: RetryRecord;
  original: PaymentRecord;
  target: ChargeTarget;
  order: ShopOrder;
  /** The order number as the shop shows it. */
  number: string;
  settings: ShopSettings;
  /** The ledger's fields every charge has. */
  base: Pick<NewCharge, 'orderId' | 'subscriptionId' | 'provider' | 'amountMinor' | 'currency' | 'requestedBy' | 'retryId'>;
  /** The attempt's idempotency key (a fresh one after each refusal of the service's own request). */
  key: string;
}

export type ProviderState = { kind: 'paid'; status: 'CAPTURED' | 'AUTHORIZED' } | { kind: 'unpaid' } | { kind: 'unreachable'; message: string } | Refusal;

/** What an attempt charges: the gateway customer and the card to use, or the wallet agreement. */
export interface ChargeTarget {
  customer_handle?: string;
  card?: string;
  agreement_id?: string;
}

/** A charge for the renewal already under way at the provider: wait `until`, and why (`unreadable`: the provider could not be asked). */
export interface UnderWay {
  kind: 'wait';
  cause: 'wallet_retrying' | 'pending' | 'unreadable';
  until: Date;
  why: string;
}

/** A refusal of the service's own request: its HTTP status, the provider's error code and message. */
export interface Refusal {
  kind: 'refused';
  status: number | null;
  code: string | null;
  message: string;
}

/** An attempt's result from the provider, in the service's terms. */
export type ChargeResult =
  | { kind: 'paid'; externalId: string; status: 'CAPTURED' | 'AUTHORIZED'; transaction?: string }
  | { kind: 'pending'; externalId: string }
  | { kind: 'declined'; externalId: string; failure: PaymentFailure }
  | { kind: 'unreachable'; message: string }
  /** The provider refused the request itself (a 4xx that is not a decline): the service's fault, never the customer's. */
  | Refusal;

export const DAY_MS = 86_400_000;
/** How far ahead a wallet charge is due: the wallet needs a charge created at least a day before it is due. */
export const WALLET_DUE_IN_DAYS = 2;
/** Wait before asking a provider again when it could not be reached (same idempotency key). */
export const PROVIDER_DOWN_WAIT_MS = 5 * 60_000;

/**
 * The provider a renewal is charged through: the one whose gateway its subscription names now, as Subscriptions'
 * own retries copy the subscription's payment method to the renewal before each (wcs_copy_payment_method_to_order),
 * so a customer who moved from the wallet to a card is charged on the card. A gateway the service does not charge
 * (none, a bank transfer): `failedOn`, the provider the renewal failed on.
 */
export function chargingProvider(subscription: { paymentMethod: string } | null, failedOn: Provider): Provider {
  return providerOfGateway(subscription?.paymentMethod) ?? failedOn;
}

/**
 * A read the provider did not answer: refused (401 or 403, a wrong or revoked key; another 4xx but 404, 408
 * and 429) is the service's own fault, held as a charge request's refusal is; anything else, unreachable.
 */
export function readProblem(what: string, failure: ProviderFailure): { kind: 'unreachable'; message: string } | Refusal {
  const status = failure.status;
  if (status !== undefined && status >= 400 && status < 500 && ![404, 408, 429].includes(status)) {
    return { kind: 'refused', status, code: failure.code === undefined ? null : String(failure.code), message: `${what}: ${failure.message}` };
  }
  return { kind: 'unreachable', message: `${what}: ${failure.kind} ${status ?? ''} ${failure.message}`.trim() };
}

/** A provider read that failed, as an under-way check meets it: a refusal, or a wait until the provider can be asked. */
export function cannotRead(what: string, failure: ProviderFailure, now: Date): UnderWay | Refusal {
  const problem = readProblem(what, failure);
  return problem.kind === 'refused' ? problem : { kind: 'wait', cause: 'unreadable', until: new Date(now.getTime() + PROVIDER_DOWN_WAIT_MS), why: problem.message };
}
