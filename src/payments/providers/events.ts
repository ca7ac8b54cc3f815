/**
 * Webhook events of both payment providers: the supported types (SPEC 6.1, 6.2) and pure parsers from the
 * delivered JSON to typed events.
 *
 * Parsers check what the provider documents as always present and reject the payload (null) when that is
 * missing. Fields known only from third parties are picked up when they have the right type and otherwise
 * ignored, so an undocumented variation cannot turn a genuine delivery into an error that blocks the provider's
 * queue. Events of an unsupported type still parse (`supported: false`): card-gateway ones are stored as SKIPPED
 * and both providers must get a 2xx for them.
 */

import { MAX_EXTERNAL_ID_LENGTH } from '../../../entities';
import { Type } from '@sinclair/typebox';
import { compileShape } from '../../shared/json-schema';
import { wellFormed } from '../../shared/unicode-text';

// ---------------------------------------------------------------------------------------------------------------
// Card gateway (Reepay / Frisbii)

export const CARD_GATEWAY_INVOICE_EVENTS = [
  'invoice_created',
  'invoice_authorized',
  'invoice_settled',
  'invoice_failed',
  'invoice_refund',
  'invoice_refund_failed',
  // A charge the gateway cancelled (ours, cancelled by the service or at the gateway): read back and closed.
  'invoice_cancelled',
] as const;

/** Invoice events the service reads back when told, and also finds on its own (the ledger reads an open charge back). */
export const CARD_GATEWAY_OPTIONAL_EVENTS: readonly string[] = ['invoice_cancelled'];

export const CARD_GATEWAY_PAYMENT_METHOD_EVENTS = [
  'customer_payment_method_added',
  'customer_payment_method_failed',
  'customer_payment_method_deleted',
] as const;

export type CardGatewayInvoiceEventType = (typeof CARD_GATEWAY_INVOICE_EVENTS)[number];
export type CardGatewayPaymentMethodEventType = (typeof CARD_GATEWAY_PAYMENT_METHOD_EVENTS)[number];

/** Fields every delivery carries, plus the optional resource references (all handles/ids are strings). */
interface CardGatewayEventBase {
  /** Id of this delivery; differs per configured URL. Signed (with timestamp). */
  id: string;
  /** Id of the event; shared by all URLs and resends, so it is the dedupe key (webhook external_id). */
  eventId: string;
  timestamp: string;
  signature: string;
  customer?: string;
  paymentMethod?: string;
  /** Checkout session id (cs_...) unless a reference was set explicitly. */
  paymentMethodReference?: string;
  subscription?: string;
  invoice?: string;
  /** Transaction behind an invoice event; the refund id on refunds. */
  transaction?: string;
  creditNote?: string;
  credit?: string;
}

export interface CardGatewayInvoiceEvent extends CardGatewayEventBase {
  supported: true;
  eventType: CardGatewayInvoiceEventType;
  /** Invoice handle: `inv-<n>` for subscription invoices, the charge handle for one-off charges. */
  invoice: string;
}

export interface CardGatewayPaymentMethodEvent extends CardGatewayEventBase {
  supported: true;
  eventType: CardGatewayPaymentMethodEventType;
  /** ca_..., ms_..., vr_... or sr_... */
  paymentMethod: string;
}

export interface CardGatewayUnsupportedEvent extends CardGatewayEventBase {
  supported: false;
  eventType: string;
}

export type CardGatewayEvent = CardGatewayInvoiceEvent | CardGatewayPaymentMethodEvent | CardGatewayUnsupportedEvent;

/**
 * Typed event from a card-gateway delivery (raw bytes, a JSON string, or the parsed object), or null when it is
 * not a well-formed delivery. Does not check the signature (see card-gateway/signature.ts).
 */
export function parseCardGatewayEvent(body: unknown): CardGatewayEvent | null {
  const object = asObject(body);
  if (!object) return null;
  const id = nonEmpty(object.id);
  const eventId = nonEmpty(object.event_id);
  const eventType = nonEmpty(object.event_type);
  const timestamp = nonEmpty(object.timestamp);
  const signature = nonEmpty(object.signature);
  if (!id || !eventId || !eventType || !timestamp || !signature) return null;

  const base: CardGatewayEventBase = {
    id,
    eventId,
    timestamp,
    signature,
    ...optional('customer', nonEmpty(object.customer)),
    ...optional('paymentMethod', nonEmpty(object.payment_method)),
    ...optional('paymentMethodReference', nonEmpty(object.payment_method_reference)),
    ...optional('subscription', nonEmpty(object.subscription)),
    ...optional('invoice', nonEmpty(object.invoice)),
    ...optional('transaction', nonEmpty(object.transaction)),
    ...optional('creditNote', nonEmpty(object.credit_note)),
    ...optional('credit', nonEmpty(object.credit)),
  };

  if ((CARD_GATEWAY_INVOICE_EVENTS as readonly string[]).includes(eventType)) {
    // Invoice events are about an invoice; without its handle the processor has nothing to read back.
    if (!base.invoice) return null;
    return { ...base, supported: true, eventType: eventType as CardGatewayInvoiceEventType, invoice: base.invoice };
  }
  if ((CARD_GATEWAY_PAYMENT_METHOD_EVENTS as readonly string[]).includes(eventType)) {
    // `customer` is documented for _added only; _failed/_deleted are expected to carry it too, but only
    // payment_method is needed to find the agreement, so only that is required.
    if (!base.paymentMethod) return null;
    return { ...base, supported: true, eventType: eventType as CardGatewayPaymentMethodEventType, paymentMethod: base.paymentMethod };
  }
  return { ...base, supported: false, eventType };
}

// ---------------------------------------------------------------------------------------------------------------
// Mobile wallet (Vipps MobilePay Recurring)

export const MOBILE_WALLET_AGREEMENT_EVENTS = [
  'recurring.agreement-activated.v1',
  'recurring.agreement-expired.v1',
  'recurring.agreement-rejected.v1',
  'recurring.agreement-stopped.v1',
] as const;

export const MOBILE_WALLET_CHARGE_EVENTS = [
  'recurring.charge-reserved.v1',
  'recurring.charge-captured.v1',
  'recurring.charge-canceled.v1', // one "l", unlike the card gateway's "cancelled"
  'recurring.charge-failed.v1',
  'recurring.charge-creation-failed.v1',
  'recurring.charge-refunded.v1',
] as const;

export const MOBILE_WALLET_EVENT_TYPES = [...MOBILE_WALLET_AGREEMENT_EVENTS, ...MOBILE_WALLET_CHARGE_EVENTS] as const;

export type MobileWalletAgreementEventType = (typeof MOBILE_WALLET_AGREEMENT_EVENTS)[number];
export type MobileWalletChargeEventType = (typeof MOBILE_WALLET_CHARGE_EVENTS)[number];
export type MobileWalletEventType = (typeof MOBILE_WALLET_EVENT_TYPES)[number];

export function isMobileWalletEventType(value: string): value is MobileWalletEventType {
  return (MOBILE_WALLET_EVENT_TYPES as readonly string[]).includes(value);
}

interface MobileWalletEventBase {
  agreementId?: string;
  agreementExternalId?: string;
  /** ISO timestamp of the event (third-party sources; not in the official plugin's reads). */
  occurred?: string;
  msn?: string;
}

export interface MobileWalletAgreementEvent extends MobileWalletEventBase {
  supported: true;
  eventType: MobileWalletAgreementEventType;
  agreementId: string;
  /** Who stopped the agreement; MERCHANT means the shop did it itself, not a customer cancellation. */
  actor?: string;
}

export interface MobileWalletChargeEvent extends MobileWalletEventBase {
  supported: true;
  eventType: MobileWalletChargeEventType;
  agreementId: string;
  chargeId: string;
  chargeExternalId?: string;
  /** Identifies the single reserve/capture/refund/cancel behind the event (nullable, added Dec 2025). */
  transactionId?: string;
  amount?: number;
  amountCaptured?: number;
  amountCanceled?: number;
  amountRefunded?: number;
  currency?: string;
  chargeType?: string;
  failureReason?: string;
  failureCode?: string;
}

export interface MobileWalletUnsupportedEvent extends MobileWalletEventBase {
  supported: false;
  eventType: string;
}

export type MobileWalletEvent = MobileWalletAgreementEvent | MobileWalletChargeEvent | MobileWalletUnsupportedEvent;

// ---------------------------------------------------------------------------------------------------------------
// What an event must hold to be taken, as JSON Schemas: checked once its signature verifies, and shown in the
// OpenAPI document as the webhook route's body.

/** An id the service stores as sent: one longer than a stored id may be is refused rather than cut. */
const storedId = (description?: string) => Type.String({ maxLength: MAX_EXTERNAL_ID_LENGTH, ...(description ? { description } : {}) });

export const CardGatewayEventSchema = Type.Object({
  id: Type.String(),
  event_id: Type.String({ minLength: 1, maxLength: MAX_EXTERNAL_ID_LENGTH, description: 'The same in every resend; the dedupe key.' }),
  event_type: Type.String({ examples: [...CARD_GATEWAY_INVOICE_EVENTS, ...CARD_GATEWAY_PAYMENT_METHOD_EVENTS] }),
  timestamp: Type.String(),
  signature: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
  invoice: Type.Optional(storedId()),
  transaction: Type.Optional(Type.String()),
  customer: Type.Optional(storedId()),
  subscription: Type.Optional(Type.String()),
  payment_method: Type.Optional(storedId()),
  payment_method_reference: Type.Optional(Type.String()),
  credit_note: Type.Optional(Type.String()),
  credit: Type.Optional(Type.String()),
}, { description: 'A card gateway webhook delivery. `signature` is the lowercase hex HMAC-SHA256 of `timestamp + id` under the webhook secret.' });

const eventTypeIn = (types: readonly string[]) => ({ type: 'object', required: ['eventType'], properties: { eventType: { enum: [...types] } } });
/** A field that is there and more than spaces. */
const givenText = (field: string) => ({ type: 'object', required: [field], properties: { [field]: { type: 'string', pattern: '\\S' } } });

export const MobileWalletEventSchema = Type.Object({
  eventType: Type.String({ pattern: '\\S', examples: [...MOBILE_WALLET_AGREEMENT_EVENTS, ...MOBILE_WALLET_CHARGE_EVENTS] }),
  agreementId: Type.Optional(storedId('Required by agreement and charge events.')),
  chargeId: Type.Optional(storedId('Required by charge events.')),
  occurred: Type.Optional(Type.String()),
  msn: Type.Optional(Type.Union([Type.String(), Type.Integer()])),
}, {
  description: 'A mobile wallet (Vipps MobilePay Recurring) webhook event, authenticated by the `Authorization: HMAC-SHA256 ...`, `x-ms-date` and `x-ms-content-sha256` headers.',
  // The ids an event is read back by: an agreement event's agreement, a charge event's agreement and charge (GET /agreements/{agreementId}/charges/{chargeId}).
  allOf: [
    { if: eventTypeIn([...MOBILE_WALLET_AGREEMENT_EVENTS, ...MOBILE_WALLET_CHARGE_EVENTS]), then: givenText('agreementId') },
    { if: eventTypeIn(MOBILE_WALLET_CHARGE_EVENTS), then: givenText('chargeId') },
  ],
});

export const cardGatewayEventShape = compileShape(CardGatewayEventSchema);
export const mobileWalletEventShape = compileShape(MobileWalletEventSchema);

/** Typed event from a mobile-wallet delivery (flat JSON, no envelope), or null when it is not well-formed. */
export function parseMobileWalletEvent(body: unknown): MobileWalletEvent | null {
  const object = asObject(body);
  if (!object || !mobileWalletEventShape.check(object).ok) return null;
  const eventType = object.eventType as string;

  const base: MobileWalletEventBase = {
    ...optional('agreementId', nonEmpty(object.agreementId)),
    ...optional('agreementExternalId', nonEmpty(object.agreementExternalId)),
    ...optional('occurred', nonEmpty(object.occurred)),
    // msn is a digit string in the docs; accept a number too rather than dropping the event.
    ...optional('msn', nonEmpty(object.msn) ?? (typeof object.msn === 'number' ? String(object.msn) : undefined)),
  };

  // The schema has made sure the ids each kind of event is read back by are there.
  if ((MOBILE_WALLET_AGREEMENT_EVENTS as readonly string[]).includes(eventType)) {
    return {
      ...base,
      supported: true,
      eventType: eventType as MobileWalletAgreementEventType,
      agreementId: base.agreementId!,
      ...optional('actor', nonEmpty(object.actor)),
    };
  }
  if ((MOBILE_WALLET_CHARGE_EVENTS as readonly string[]).includes(eventType)) {
    const chargeId = object.chargeId as string;
    return {
      ...base,
      supported: true,
      eventType: eventType as MobileWalletChargeEventType,
      agreementId: base.agreementId!,
      chargeId,
      ...optional('chargeExternalId', nonEmpty(object.chargeExternalId)),
      ...optional('transactionId', nonEmpty(object.transactionId)),
      ...optional('amount', minorUnits(object.amount)),
      ...optional('amountCaptured', minorUnits(object.amountCaptured)),
      ...optional('amountCanceled', minorUnits(object.amountCanceled)),
      ...optional('amountRefunded', minorUnits(object.amountRefunded)),
      ...optional('currency', nonEmpty(object.currency)),
      ...optional('chargeType', nonEmpty(object.chargeType)),
      ...optional('failureReason', nonEmpty(object.failureReason)),
      ...optional('failureCode', nonEmpty(object.failureCode) ?? (typeof object.failureCode === 'number' ? String(object.failureCode) : undefined)),
    };
  }
  return { ...base, supported: false, eventType };
}

// ---------------------------------------------------------------------------------------------------------------

function asObject(body: unknown): Record<string, unknown> | null {
  let value = body;
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  // Text that is not well-formed Unicode (a lone surrogate) could be neither stored as sent nor put in a URL.
  return value !== null && typeof value === 'object' && !Array.isArray(value) && wellFormed(value) ? (value as Record<string, unknown>) : null;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function minorUnits(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** `{ [key]: value }` when value is defined, else `{}`: keeps absent fields absent under exactOptionalPropertyTypes. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
