import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

// Tables behind the staff routes (customer lookup, subscription support, renewal discounts).
// Names are without the site's `$table_prefix`, which the naming strategy adds.

// ---------------------------------------------------------------------------------------------------------------
// WooCommerce's own tables that the staff routes read or write (never altered: synchronize off).

/** REST API keys: `consumer_key` is HMAC-SHA256(ck, "wc-api"), the secret is stored in clear. */
@Entity({ name: 'woocommerce_api_keys', synchronize: false })
@Index('consumer_key', ['consumerKey'])
@Index('consumer_secret', ['consumerSecret'])
export class WooCommerceApiKey {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'key_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'user_id' }) userId!: string;
  @Column({ type: 'varchar', length: 200, name: 'description', nullable: true }) description!: string | null;
  @Column({ type: 'varchar', length: 10, name: 'permissions' }) permissions!: string;
  @Column({ type: 'char', length: 64, name: 'consumer_key' }) consumerKey!: string;
  @Column({ type: 'char', length: 43, name: 'consumer_secret' }) consumerSecret!: string;
  @Column({ type: 'longtext', name: 'nonces', nullable: true }) nonces!: string | null;
  @Column({ type: 'char', length: 7, name: 'truncated_key' }) truncatedKey!: string;
  @Column({ type: 'datetime', name: 'last_access', nullable: true }) lastAccess!: string | null;
}

/** Action Scheduler's queue (bundled with WooCommerce); WooCommerce Subscriptions schedules renewals here. */
@Entity({ name: 'actionscheduler_actions', synchronize: false })
// The indexes every supported Action Scheduler has; versions differ in the rest (3.x: `hook`, `status`; newer:
// `hook_status_scheduled_date_gmt`, `status_scheduled_date_gmt`, ...), so none of those is named here.
@Index('scheduled_date_gmt', ['scheduledGmt'])
@Index('args', ['args'])
@Index('group_id', ['groupId'])
@Index('last_attempt_gmt', ['lastAttemptGmt'])
@Index('claim_id_status_scheduled_date_gmt', ['claimId', 'status', 'scheduledGmt'])
export class ScheduledAction {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'action_id' }) id!: string;
  @Column({ type: 'varchar', length: 191, name: 'hook' }) hook!: string;
  @Column({ type: 'varchar', length: 20, name: 'status' }) status!: string;
  @Column({ type: 'datetime', name: 'scheduled_date_gmt', nullable: true }) scheduledGmt!: string | null;
  @Column({ type: 'datetime', name: 'scheduled_date_local', nullable: true }) scheduledLocal!: string | null;
  @Column({ type: 'tinyint', unsigned: true, name: 'priority', default: 10 }) priority!: number;
  @Column({ type: 'varchar', length: 191, name: 'args', nullable: true }) args!: string | null;
  @Column({ type: 'longtext', name: 'schedule', nullable: true }) schedule!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'group_id', default: 0 }) groupId!: string;
  @Column({ type: 'int', name: 'attempts', default: 0 }) attempts!: number;
  @Column({ type: 'datetime', name: 'last_attempt_gmt', nullable: true }) lastAttemptGmt!: string | null;
  @Column({ type: 'datetime', name: 'last_attempt_local', nullable: true }) lastAttemptLocal!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'claim_id', default: 0 }) claimId!: string;
  @Column({ type: 'varchar', length: 8000, name: 'extended_args', nullable: true }) extendedArgs!: string | null;
}

@Entity({ name: 'actionscheduler_groups', synchronize: false })
@Index('slug', ['slug'])
export class ScheduledActionGroup {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'group_id' }) id!: string;
  @Column({ type: 'varchar', length: 255, name: 'slug' }) slug!: string;
}

// ---------------------------------------------------------------------------------------------------------------
// The service's own tables (created by `npm run migrate`).

/**
 * The customer lookup's index: one row per order or subscription with its billing email and phone in
 * normalised form (lower-case email; E.164 phone), kept current by the worker from the authoritative store.
 */
@Entity({ name: 'sidecar_customer_contacts' })
@Index('email_type_date', ['email', 'orderType', 'dateCreatedGmt'])
@Index('phone_type_date', ['phone', 'orderType', 'dateCreatedGmt'])
@Index('customer_type_date', ['customerId', 'orderType', 'dateCreatedGmt'])
export class CustomerContact {
  @PrimaryColumn({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'varchar', length: 20, name: 'order_type' }) orderType!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'customer_id', default: 0 }) customerId!: string;
  @Column({ type: 'varchar', length: 191, nullable: true }) email!: string | null;
  @Column({ type: 'varchar', length: 20, nullable: true }) phone!: string | null;
  @Column({ type: 'datetime', name: 'date_created_gmt', nullable: true }) dateCreatedGmt!: string | null;
}

/** How far the contact index has read each store (`legacy` posts tables, `hpos` order tables). */
@Entity({ name: 'sidecar_customer_contact_index' })
export class CustomerContactIndexState {
  @PrimaryColumn({ type: 'varchar', length: 10 }) store!: string;
  @Column({ type: 'tinyint', default: 0 }) built!: number;
  @Column({ type: 'bigint', unsigned: true, name: 'build_cursor', default: 0 }) buildCursor!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'max_id', default: 0 }) maxId!: string;
  @Column({ type: 'datetime', name: 'changed_since', nullable: true }) changedSince!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'changed_after_id', default: 0 }) changedAfterId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_cursor', default: 0 }) sweepCursor!: string;
  @Column({ type: 'datetime', precision: 3, name: 'refreshed_at', nullable: true }) refreshedAt!: string | null;
  // The rolling sweep's pass (CUSTOMER_INDEX_SWEEP_SECONDS): when it started and ended, when its next batch may
  // be read, the highest ID it covers, the orders counted in it at its start and read so far, the rows it read.
  @Column({ type: 'datetime', precision: 3, name: 'sweep_started_at', nullable: true }) sweepStartedAt!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'sweep_finished_at', nullable: true }) sweepFinishedAt!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'sweep_due_at', nullable: true }) sweepDueAt!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_end_id', default: 0 }) sweepEndId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_orders', default: 0 }) sweepOrders!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_orders_read', default: 0 }) sweepOrdersRead!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_pass_rows', default: 0 }) sweepPassRows!: string;
  // Running totals and the last whole pass, for /metrics.
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_passes', default: 0 }) sweepPasses!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_rows_read', default: 0 }) sweepRowsRead!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_last_pass_ms', default: 0 }) sweepLastPassMs!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'sweep_last_pass_rows', default: 0 }) sweepLastPassRows!: string;
}

/** A cancellation reason recorded on a subscription: a `cancellation_reason` post chosen by the customer. */
@Entity({ name: 'sidecar_subscription_cancellation_reasons' })
@Index('subscription_id', ['subscriptionId'])
export class SubscriptionCancellationReason {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'subscription_id' }) subscriptionId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'reason_id' }) reasonId!: string;
  /** The reason's title and slug when it was recorded (shown if the post is later deleted). */
  @Column({ type: 'text' }) title!: string;
  @Column({ type: 'varchar', length: 200 }) slug!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'recorded_by', default: 0 }) recordedBy!: string;
  @Column({ type: 'datetime', name: 'date_gmt' }) dateGmt!: string;
}

/** A kind of renewal discount staff can give; its scheme (amount or percentage) is defined in code. */
@Entity({ name: 'sidecar_renewal_discount_types' })
@Index('slug', ['slug'], { unique: true })
export class RenewalDiscountType {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 100 }) slug!: string;
  @Column({ type: 'varchar', length: 200 }) name!: string;
  @Column({ type: 'varchar', length: 32 }) scheme!: string;
  @Column({ type: 'text', nullable: true }) description!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
}

/** A discount on a subscription's coming renewal, optionally linked to the order it applies to. */
@Entity({ name: 'sidecar_renewal_discounts' })
@Index('subscription_id', ['subscriptionId'])
@Index('order_id', ['orderId'])
export class RenewalDiscount {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'subscription_id' }) subscriptionId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id', nullable: true }) orderId!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'type_id' }) typeId!: string;
  @Column({ type: 'decimal', precision: 26, scale: 8 }) amount!: string;
  @Column({ type: 'varchar', length: 10 }) currency!: string;
  /** pending, applied (to the renewal order in `order_id`) or cancelled. */
  @Column({ type: 'varchar', length: 20 }) status!: string;
  /** What the renewal it lowered was lowered by, in the order's currency (a percentage resolved, or a capped amount). */
  @Column({ type: 'decimal', precision: 26, scale: 8, name: 'applied_amount', nullable: true }) appliedAmount!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'applied_at', nullable: true }) appliedAt!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'created_via' }) createdVia!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'created_by', default: 0 }) createdBy!: string;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'updated_at' }) updatedAt!: string;
}
