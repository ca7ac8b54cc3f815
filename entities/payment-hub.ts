import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

// The service's own tables (created by `npm run migrate`), prefixed like the site's tables. Provider ids
// (external_id, customer_handle, payment_method) compare exactly: a binary NO PAD collation (migration ExactExternalIds).

export type WebhookStatus = 'PENDING' | 'PROCESSED' | 'SKIPPED' | 'FAILED';
export type PaymentStatus = 'AUTHORIZED' | 'CAPTURED' | 'FAILED' | 'REFUNDED' | 'CANCELED';
export type AgreementStatus = 'PENDING' | 'ACTIVE' | 'DISABLED';
export type AgreementDisableReason = 'FAILED' | 'CANCELED' | 'EXPIRED' | 'REJECTED';
export type PaymentRetryStatus = 'PENDING' | 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'CANCELED';
export type Provider = 'card_gateway' | 'mobile_wallet';
/**
 * `soft`: DUNNING_PLAN; `processing`: DUNNING_PROCESSING_PLAN; `new_method`: the one charge after the customer saved a new
 * payment method; `staff`: a charge staff asked for now (Charge now), outside the plans, so it uses up no planned attempt;
 * `payday`: the attempt early on the first bank day from payday after a decline for lack of funds (DUNNING_PAYDAYS),
 * besides the plan's, so it uses up none of them either.
 */
export type RetryPlan = 'soft' | 'processing' | 'new_method' | 'staff' | 'payday';

/** The longest provider id stored (the card gateway documents handles of up to 255 characters); a longer one is refused, never cut. */
export const MAX_EXTERNAL_ID_LENGTH = 255;

/** A received card-gateway delivery: the inbox, and the outbox while Redis is away. */
@Entity({ name: 'sidecar_webhooks' })
@Index('provider_external_id', ['provider', 'externalId'], { unique: true })
@Index('status_next_attempt', ['status', 'nextAttemptAt'])
@Index('status_provider_created', ['status', 'provider', 'createdAt'])
export class Webhook {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: Provider;
  @Column({ type: 'varchar', length: 255, name: 'external_id' }) externalId!: string;
  @Column({ type: 'varchar', length: 100, name: 'event_type' }) eventType!: string;
  @Column({ type: 'varchar', length: 16 }) status!: WebhookStatus;
  @Column({ type: 'mediumblob', name: 'raw_body' }) rawBody!: Buffer;
  @Column({ type: 'int', unsigned: true, default: 0 }) attempts!: number;
  @Column({ type: 'text', name: 'last_error', nullable: true }) lastError!: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) outcome!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'next_attempt_at', nullable: true }) nextAttemptAt!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'locked_until', nullable: true }) lockedUntil!: string | null;
  /** The processing attempt that took the webhook last (see WebhookRepository.claim). */
  @Column({ type: 'char', length: 22, name: 'claim_token', nullable: true, charset: 'ascii', collation: 'ascii_bin' }) claimToken!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'processed_at', nullable: true }) processedAt!: string | null;
}

/** A payment as one provider knows it (an invoice/charge handle, or a wallet charge id). */
@Entity({ name: 'sidecar_payments' })
@Index('provider_external_id', ['provider', 'externalId'], { unique: true })
@Index('order_id', ['orderId'])
@Index('reconcile_updated_at', ['updatedAt'])
export class Payment {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: Provider;
  @Column({ type: 'varchar', length: 255, name: 'external_id' }) externalId!: string;
  @Column({ type: 'varchar', length: 16, nullable: true }) status!: PaymentStatus | null;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id', nullable: true }) orderId!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'agreement_id', nullable: true }) agreementId!: string | null;
  @Column({ type: 'bigint', name: 'amount_minor', nullable: true }) amountMinor!: string | null;
  @Column({ type: 'varchar', length: 10, nullable: true }) currency!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}

@Entity({ name: 'sidecar_payment_meta' })
@Index('payment_key', ['paymentId', 'key'], { unique: true })
/** The payments carrying one key (the second captures flagged, `second_capture_of`), for /metrics (migration SecondCaptures). */
@Index('key_payment', ['key', 'paymentId'])
export class PaymentMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'payment_id' }) paymentId!: string;
  @Column({ type: 'varchar', length: 64, name: 'meta_key' }) key!: string;
  @Column({ type: 'text', name: 'meta_value', nullable: true }) value!: string | null;
}

/** A stored payment method mandate: a card-gateway payment method or a wallet agreement. */
@Entity({ name: 'sidecar_agreements' })
@Index('provider_external_id', ['provider', 'externalId'], { unique: true })
@Index('subscription_id', ['subscriptionId'])
@Index('reconcile_updated_at', ['updatedAt'])
/** Made for the card expiry reminders' pass (migration CardExpiryReminderPass), which now walks the subscriptions' `_reepay_token` instead. */
@Index('provider_status_subscription', ['provider', 'status', 'subscriptionId'])
export class Agreement {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: Provider;
  @Column({ type: 'varchar', length: 255, name: 'external_id' }) externalId!: string;
  @Column({ type: 'varchar', length: 16 }) status!: AgreementStatus;
  @Column({ type: 'varchar', length: 16, name: 'disable_reason', nullable: true }) disableReason!: AgreementDisableReason | null;
  @Column({ type: 'varchar', length: 255, name: 'customer_handle', nullable: true }) customerHandle!: string | null;
  @Column({ type: 'varchar', length: 255, name: 'payment_method', nullable: true }) paymentMethod!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'subscription_id', nullable: true }) subscriptionId!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}

/** One planned dunning attempt for a failed renewal order. */
@Entity({ name: 'sidecar_payment_retries' })
@Index('order_attempt', ['orderId', 'attempt'], { unique: true })
@Index('status_scheduled', ['status', 'scheduledAt'])
export class PaymentRetry {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'subscription_id' }) subscriptionId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'payment_id' }) paymentId!: string;
  @Column({ type: 'int', unsigned: true }) attempt!: number;
  @Column({ type: 'varchar', length: 16 }) status!: PaymentRetryStatus;
  @Column({ type: 'datetime', precision: 3, name: 'scheduled_at' }) scheduledAt!: string;
  @Column({ type: 'varchar', length: 64, name: 'idempotency_key' }) idempotencyKey!: string;
  /** Which plan of the decline policy the attempt belongs to; each plan counts its own attempts. */
  @Column({ type: 'varchar', length: 16, default: 'soft' }) plan!: RetryPlan;
  @Column({ type: 'varchar', length: 255, nullable: true }) result!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}

/** A webhook registration with the mobile wallet; its secret verifies deliveries. */
@Entity({ name: 'sidecar_mobile_wallet_webhooks' })
export class MobileWalletRegistration {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 64, name: 'registration_id' }) registrationId!: string;
  @Column({ type: 'varchar', length: 2048 }) url!: string;
  @Column({ type: 'text' }) events!: string;
  @Column({ type: 'varchar', length: 255 }) secret!: string;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
}

/**
 * One running worker process, as it last reported itself (every few seconds): the jobs it has in hand and
 * when one last finished, so the operator's CLI and the metrics see a worker that stopped making progress.
 */
@Entity({ name: 'sidecar_workers' })
export class WorkerHeartbeat {
  /** The process's claim-token prefix: the webhooks it holds carry it. */
  @PrimaryColumn({ type: 'char', length: 16, charset: 'ascii', collation: 'ascii_bin' }) name!: string;
  @Column({ type: 'varchar', length: 191 }) host!: string;
  @Column({ type: 'int', unsigned: true }) pid!: number;
  @Column({ type: 'datetime', precision: 3, name: 'started_at' }) startedAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'seen_at' }) seenAt!: string;
  @Column({ type: 'int', unsigned: true, name: 'jobs_in_flight' }) jobsInFlight!: number;
  @Column({ type: 'bigint', unsigned: true, name: 'jobs_finished' }) jobsFinished!: string;
  @Column({ type: 'datetime', precision: 3, name: 'progress_at' }) progressAt!: string;
  /** Set when the watchdog found jobs in hand and none finishing, with what they waited for. */
  @Column({ type: 'datetime', precision: 3, name: 'stalled_at', nullable: true }) stalledAt!: string | null;
  @Column({ type: 'text', name: 'stall_reason', nullable: true }) stallReason!: string | null;
}

export type ReconcileKind = 'payment' | 'agreement' | 'order';
export type ReconcileItemStatus = 'OPEN' | 'CLOSED' | 'EXPIRED';

/**
 * Something still open at a provider that the worker asks the provider about on a schedule (reconciliation):
 * a payment or agreement of the service, or a WooCommerce order awaiting the card gateway's answer.
 */
@Entity({ name: 'sidecar_reconcile_items' })
@Index('kind_ref', ['kind', 'refId'], { unique: true })
@Index('next_at', ['nextAt'])
@Index('status_provider_kind_opened', ['status', 'provider', 'kind', 'openedAt'])
export class ReconcileItem {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 16, charset: 'ascii', collation: 'ascii_bin' }) kind!: ReconcileKind;
  /** The payment's, agreement's or order's id. */
  @Column({ type: 'bigint', unsigned: true, name: 'ref_id' }) refId!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: Provider;
  @Column({ type: 'varchar', length: 16 }) status!: ReconcileItemStatus;
  /** When the item opened or last changed: the schedule counts from here. */
  @Column({ type: 'datetime', precision: 3, name: 'opened_at' }) openedAt!: string;
  /** When it is asked about next; null once closed or once the schedule has ended. */
  @Column({ type: 'datetime', precision: 3, name: 'next_at', nullable: true }) nextAt!: string | null;
  @Column({ type: 'int', unsigned: true, default: 0 }) checks!: number;
  /** Provider failures in a row (backoff). */
  @Column({ type: 'int', unsigned: true, default: 0 }) failures!: number;
  @Column({ type: 'datetime', precision: 3, name: 'last_checked_at', nullable: true }) lastCheckedAt!: string | null;
  @Column({ type: 'varchar', length: 64, name: 'last_state', nullable: true }) lastState!: string | null;
  @Column({ type: 'varchar', length: 255, name: 'last_error', nullable: true }) lastError!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}

/** Running totals of reconciliation by provider, kind and outcome (checked, found, fixed, unreachable), for /metrics. */
@Entity({ name: 'sidecar_reconcile_counts' })
export class ReconcileCount {
  @PrimaryColumn({ type: 'varchar', length: 32 }) provider!: string;
  @PrimaryColumn({ type: 'varchar', length: 16 }) kind!: string;
  @PrimaryColumn({ type: 'varchar', length: 16 }) outcome!: string;
  @Column({ type: 'bigint', unsigned: true, default: 0 }) count!: string;
}

/**
 * How far a periodic pass has looked through a table, one row per pass by name (see PassMarks): reconciliation's
 * discovery of payments, agreements and orders that opened or changed, and the second-capture sweep.
 */
@Entity({ name: 'sidecar_reconcile_state' })
export class ReconcileState {
  @PrimaryColumn({ type: 'varchar', length: 32 }) name!: string;
  @Column({ type: 'varchar', length: 64 }) value!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}

export type DunningCaseStatus = 'OPEN' | 'RECOVERED' | 'LOST';
/** Which plan a failed renewal's dunning follows (DUNNING_HOLDOUT_PERCENT): the service's own or the baseline. */
export type DunningArm = 'service' | 'baseline';
/** What the decline policy decided on the renewal's latest failure (src/dunning/decline-policy.ts). */
export type DunningPolicy = 'retry' | 'retry_soon' | 'ask_customer' | 'provider_retrying';
/** How a failed renewal was paid in the end. */
/** `shop_payment`: paid through the shop itself (its checkout, its gateway plugin), not by a retry of the provider's or the service's. */
export type RecoveryMeans = 'service_retry' | 'staff_charge' | 'new_payment_method' | 'provider_retry' | 'shop_payment' | 'reconciliation';

/**
 * One failed renewal order, from its first failed payment until it is paid (RECOVERED) or dunning ends
 * without payment (LOST): what `payment-hub dunning report` and the dunning metrics count.
 */
@Entity({ name: 'sidecar_dunning_cases' })
@Index('order_id', ['orderId'], { unique: true })
@Index('status_deadline', ['status', 'deadlineAt'])
@Index('opened_at', ['openedAt'])
@Index('subscription_status', ['subscriptionId', 'status'])
@Index('method_status', ['methodKey', 'status'])
export class DunningCase {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'subscription_id' }) subscriptionId!: string;
  /** The renewal's latest failed payment: what a charge after a new payment method stands in for. */
  @Column({ type: 'bigint', unsigned: true, name: 'payment_id' }) paymentId!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: Provider;
  /** What the renewal was charged on (as ChargeAttempt.methodKey): a new method saved there charges the renewal again. */
  @Column({ type: 'varchar', length: 300, name: 'method_key', nullable: true, charset: 'utf8mb4', collation: 'utf8mb4_bin' }) methodKey!: string | null;
  @Column({ type: 'varchar', length: 10 }) currency!: string;
  /** The renewal order's total when it first failed, in minor units. */
  @Column({ type: 'bigint', name: 'amount_minor' }) amountMinor!: string;
  /** The first decline's reason: the card gateway's `error_state` or the wallet's `failureReason`; `unknown` when none was given. */
  @Column({ type: 'varchar', length: 64, name: 'first_reason' }) firstReason!: string;
  @Column({ type: 'varchar', length: 16 }) policy!: DunningPolicy;
  /** The holdout's arm, decided when the case opened (src/dunning/holdout.ts): `baseline` follows WooCommerce Subscriptions' default retry timing. */
  @Column({ type: 'varchar', length: 16, default: 'service' }) arm!: DunningArm;
  @Column({ type: 'varchar', length: 16 }) status!: DunningCaseStatus;
  /** Charges made for this renewal, the first included. */
  @Column({ type: 'int', unsigned: true, default: 1 }) attempts!: number;
  @Column({ type: 'datetime', precision: 3, name: 'opened_at' }) openedAt!: string;
  /** When the customer was asked for a new payment method, and reminded. */
  @Column({ type: 'datetime', precision: 3, name: 'customer_asked_at', nullable: true }) customerAskedAt!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'customer_reminded_at', nullable: true }) customerRemindedAt!: string | null;
  /** When dunning gives up and the subscription is cancelled, unless paid before. */
  @Column({ type: 'datetime', precision: 3, name: 'deadline_at', nullable: true }) deadlineAt!: string | null;
  /**
   * The subscription's payment method (the gateway plugin's card token, the wallet's agreement) when the renewal
   * failed, or the one last charged for it since: the subscription naming another is a method the customer switched to.
   */
  @Column({ type: 'varchar', length: 255, name: 'payment_method_seen', nullable: true, charset: 'utf8mb4', collation: 'utf8mb4_bin' }) paymentMethodSeen!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'closed_at', nullable: true }) closedAt!: string | null;
  @Column({ type: 'varchar', length: 32, name: 'recovered_by', nullable: true }) recoveredBy!: RecoveryMeans | null;
  @Column({ type: 'bigint', name: 'recovered_amount_minor', nullable: true }) recoveredAmountMinor!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}

/**
 * Every charge tried on a payment method, whoever tried it (the shop's renewal, the service's dunning, a
 * charge after a new card), so that each method stays within the card schemes' caps per day and per 30 days.
 */
@Entity({ name: 'sidecar_charge_attempts' })
@Index('method_attempted', ['methodKey', 'attemptedAt'])
@Index('payment_id', ['paymentId'], { unique: true })
export class ChargeAttempt {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  /** `card_gateway:customer:<handle>` or `mobile_wallet:agreement:<id>`: what the charge was made on. */
  @Column({ type: 'varchar', length: 300, name: 'method_key', charset: 'utf8mb4', collation: 'utf8mb4_bin' }) methodKey!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id', nullable: true }) orderId!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'payment_id', nullable: true }) paymentId!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'attempted_at' }) attemptedAt!: string;
}

/** An expiry reminder sent for one stored card of one subscription: never twice for the same card. */
@Entity({ name: 'sidecar_card_expiry_reminders' })
export class CardExpiryReminder {
  @PrimaryColumn({ type: 'bigint', unsigned: true, name: 'subscription_id' }) subscriptionId!: string;
  @PrimaryColumn({ type: 'varchar', length: 255, name: 'payment_method', charset: 'utf8mb4', collation: 'utf8mb4_bin' }) paymentMethod!: string;
  /** The card's `exp_date` as the gateway gave it (`MM-YY`). */
  @Column({ type: 'varchar', length: 8, name: 'exp_date' }) expDate!: string;
  @Column({ type: 'datetime', precision: 3, name: 'sent_at' }) sentAt!: string;
}

/**
 * Before the renewal (src/dunning/pre-renewal-check.use-case.ts): a subscription's payment method read at its
 * provider a few days before one renewal and found not to work, and the customer asked once, through WooCommerce,
 * for another. `fixed_at`: when the subscription named a payment method that works before that renewal (the
 * customer acted on the notice: a renewal saved before it failed); null while it has not.
 */
@Entity({ name: 'sidecar_pre_renewal_checks' })
@Index('open_checks', ['fixedAt', 'nextPayment'])
export class PreRenewalCheck {
  @PrimaryColumn({ type: 'bigint', unsigned: true, name: 'subscription_id' }) subscriptionId!: string;
  /** The renewal the customer was asked about: the subscription's `_schedule_next_payment` then (GMT). */
  @PrimaryColumn({ type: 'datetime', name: 'next_payment' }) nextPayment!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: string;
  /** The card (`ca_…`) or wallet agreement the subscription named then. */
  @Column({ type: 'varchar', length: 255, name: 'payment_method', charset: 'utf8mb4', collation: 'utf8mb4_bin' }) paymentMethod!: string;
  /** What was found: `card_<state>` (the gateway's payment method state) or `agreement_<STATUS>` (the wallet's), or `card_missing`. */
  @Column({ type: 'varchar', length: 64 }) finding!: string;
  @Column({ type: 'datetime', precision: 3, name: 'asked_at' }) askedAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'fixed_at', nullable: true }) fixedAt!: string | null;
  /** The payment method that works, named by the subscription when it was fixed. */
  @Column({ type: 'varchar', length: 255, name: 'fixed_method', nullable: true, charset: 'utf8mb4', collation: 'utf8mb4_bin' }) fixedMethod!: string | null;
}

/**
 * Where the card expiry reminders' pass stands (one row, id 1): when the latest pass started and finished,
 * how far the running one has come (by subscription id), and which worker holds it (a lease it renews).
 */
@Entity({ name: 'sidecar_card_expiry_reminder_pass' })
export class CardExpiryReminderPass {
  @PrimaryColumn({ type: 'tinyint', unsigned: true }) id!: number;
  @Column({ type: 'datetime', precision: 3, name: 'started_at', nullable: true }) startedAt!: string | null;
  /** Null while a pass runs. */
  @Column({ type: 'datetime', precision: 3, name: 'finished_at', nullable: true }) finishedAt!: string | null;
  /** The last subscription id the running pass has been through. */
  @Column({ type: 'bigint', unsigned: true, name: 'cursor_id', default: 0 }) cursorId!: string;
  @Column({ type: 'varchar', length: 64, nullable: true, charset: 'ascii', collation: 'ascii_bin' }) holder!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'held_until', nullable: true }) heldUntil!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}

/**
 * A charge request a provider refused for a reason of the service's own (a 4xx that is not a decline: a
 * field it refuses, a revoked or wrong key, an unknown resource, a conflict). The dunning attempt is held,
 * not failed: the customer hears nothing and no cap is used. Open (no `resolved_at`) until the attempt's
 * request is accepted; `payment-hub doctor` fails while one is open, and /metrics counts every row.
 */
@Entity({ name: 'sidecar_provider_refusals' })
@Index('resolved_at', ['resolvedAt'])
@Index('retry_id', ['retryId'])
export class ProviderRefusal {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: Provider;
  @Column({ type: 'bigint', unsigned: true, name: 'retry_id' }) retryId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'int', unsigned: true, name: 'http_status', nullable: true }) httpStatus!: number | null;
  /** The provider's error code (the card gateway's numeric code, the wallet's problem type), when it gave one. */
  @Column({ type: 'varchar', length: 128, nullable: true }) code!: string | null;
  @Column({ type: 'varchar', length: 255 }) message!: string;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'resolved_at', nullable: true }) resolvedAt!: string | null;
}

/** What staff did on a failed renewal from the order screen. */
export type DunningStaffActionKind = 'charge_now' | 'payment_link' | 'stop_dunning';

/** One action of staff on a failed renewal's case, and who took it (the failed renewal's story shows it). */
@Entity({ name: 'sidecar_dunning_staff_actions' })
@Index('order_created', ['orderId', 'createdAt'])
export class DunningStaffAction {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'case_id' }) caseId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'varchar', length: 32 }) action!: DunningStaffActionKind;
  /** The dunning attempt a charge now made. */
  @Column({ type: 'int', unsigned: true, nullable: true }) attempt!: number | null;
  @Column({ type: 'bigint', unsigned: true, name: 'user_id' }) userId!: string;
  /** The staff member's display name when they acted. */
  @Column({ type: 'varchar', length: 250, name: 'user_name' }) userName!: string;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
}

/**
 * A charge's state in the ledger. Open: `OPEN` (asked for, or about to be; the provider's word not in yet) and
 * `CANCELING` (the provider accepted a cancel that it has not yet enacted). Closed, on the provider's word only:
 * `TAKEN` (settled, reserved or captured), `DECLINED`, `CANCELED` (cancelled at the provider, or never made
 * there), `REFUSED` (the provider refused the request itself: nothing was made).
 */
export type ChargeState = 'OPEN' | 'CANCELING' | 'TAKEN' | 'DECLINED' | 'CANCELED' | 'REFUSED';
/** Who asked for a charge: the dunning plan, a staff member (Charge now), or a new payment method of the customer's. */
export type ChargeRequester = 'plan' | 'staff' | 'new_method';

/**
 * The charge ledger: every charge the service asks a provider for, written and committed before the request, with
 * the identifiers every repeat of the request reuses (the card gateway's handle, the wallet's `orderId`, the
 * idempotency key, the wallet's due date), the amount and the payment method charged.
 */
@Entity({ name: 'sidecar_charges' })
@Index('order_id', ['orderId'])
@Index('state', ['state'])
@Index('provider_external_id', ['provider', 'externalId'])
@Index('retry_id', ['retryId'])
export class Charge {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  /** The renewal order the charge pays. */
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'subscription_id' }) subscriptionId!: string;
  @Column({ type: 'varchar', length: 32 }) provider!: Provider;
  /** The card gateway's charge handle, or the wallet's `orderId` (its charge ID). */
  @Column({ type: 'varchar', length: 255, name: 'external_id', charset: 'utf8mb4', collation: 'utf8mb4_bin' }) externalId!: string;
  @Column({ type: 'varchar', length: 64, name: 'idempotency_key', charset: 'ascii', collation: 'ascii_bin' }) idempotencyKey!: string;
  @Column({ type: 'bigint', name: 'amount_minor' }) amountMinor!: string;
  @Column({ type: 'varchar', length: 10 }) currency!: string;
  /** What is charged: the card (`source`: a card ID or `auto`) or the wallet agreement. */
  @Column({ type: 'varchar', length: 255, name: 'payment_method', charset: 'utf8mb4', collation: 'utf8mb4_bin' }) paymentMethod!: string;
  @Column({ type: 'varchar', length: 255, name: 'customer_handle', nullable: true, charset: 'utf8mb4', collation: 'utf8mb4_bin' }) customerHandle!: string | null;
  /** The wallet charge's due date (YYYY-MM-DD), part of the request that each repeat sends unchanged. */
  @Column({ type: 'char', length: 10, nullable: true, charset: 'ascii', collation: 'ascii_bin' }) due!: string | null;
  /**
   * The wallet charge's `retryDays` (0-14): the days after `due` on which the wallet retries the charge itself, part
   * of the request that each repeat sends unchanged. Null: a charge written before the wallet retried the service's
   * charges (sent as one attempt, `retryDays: 0`), and every card charge.
   */
  @Column({ type: 'tinyint', unsigned: true, name: 'retry_days', nullable: true }) retryDays!: number | null;
  /** The charge's text at the provider (the gateway's `ordertext`, the wallet's `description`). */
  @Column({ type: 'varchar', length: 255 }) description!: string;
  @Column({ type: 'varchar', length: 16, name: 'requested_by' }) requestedBy!: ChargeRequester;
  /** The dunning attempt that asked for it. */
  @Column({ type: 'bigint', unsigned: true, name: 'retry_id', nullable: true }) retryId!: string | null;
  @Column({ type: 'varchar', length: 16 }) state!: ChargeState;
  /** The payment row of the charge, once the provider has answered with one. */
  @Column({ type: 'bigint', unsigned: true, name: 'payment_id', nullable: true }) paymentId!: string | null;
  /** Requests sent, and how many of them went unanswered (a timeout, a reset, a 5xx): then something may exist. */
  @Column({ type: 'int', unsigned: true, default: 0 }) sends!: number;
  @Column({ type: 'int', unsigned: true, default: 0 }) unanswered!: number;
  @Column({ type: 'datetime', precision: 3, name: 'last_sent_at', nullable: true }) lastSentAt!: string | null;
  /**
   * Until when, by the database's clock, the charge's last request may still reach its provider: set as it is sent
   * (its time to leave plus the call's own bound), cleared once the call ended. While it is ahead, nobody closes the
   * charge as never made, whatever a host's clock says.
   */
  @Column({ type: 'datetime', precision: 3, name: 'in_flight_until', nullable: true }) inFlightUntil!: string | null;
  /** Since when the charge is no longer wanted, and why: it is cancelled at the provider and confirmed. */
  @Column({ type: 'datetime', precision: 3, name: 'cancel_wanted_at', nullable: true }) cancelWantedAt!: string | null;
  @Column({ type: 'varchar', length: 64, name: 'cancel_reason', nullable: true }) cancelReason!: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) result!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'closed_at', nullable: true }) closedAt!: string | null;
}

/**
 * A renewal's one slot for a charge: `open_charge_id` while a charge of the ledger is open, `taken_charge_id` once
 * one took the money. A charge opens only by a conditional update that finds both empty, so at most one charge per
 * renewal is open, and none opens after the money was taken, whichever process asks.
 */
@Entity({ name: 'sidecar_renewal_charge_slots' })
export class RenewalChargeSlot {
  @PrimaryColumn({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'open_charge_id', nullable: true }) openChargeId!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'taken_charge_id', nullable: true }) takenChargeId!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}
