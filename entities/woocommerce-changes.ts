import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type WooCommerceChangeStatus = 'pending' | 'applying' | 'applied' | 'failed';

/** The expression of `open_payment_of`; its op list is PAYMENT_HAND_OVER_OPS (src/shop/order.ts), which a unit test holds it to. */
export const OPEN_PAYMENT_OF = "IF(status IN ('pending', 'applying') AND op IN ('order_payment_complete', 'order_payment_authorized', 'order_payment_failed'), object_id, NULL)";

/**
 * An order or subscription change the service decided and WooCommerce applies: the companion plugin
 * runs it with WooCommerce's own calls when Action Scheduler runs the row's action.
 */
@Entity({ name: 'sidecar_woocommerce_changes' })
@Index('object_status', ['objectId', 'status'])
@Index('status_created', ['status', 'createdAt'])
@Index('open_payment_of', ['openPaymentOf'])
export class WooCommerceChange {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true }) id!: string;
  @Column({ type: 'varchar', length: 40 }) op!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'object_id' }) objectId!: string;
  @Column({ type: 'text' }) payload!: string;
  @Column({ type: 'varchar', length: 16 }) status!: WooCommerceChangeStatus;
  @Column({ type: 'bigint', unsigned: true, name: 'action_id', nullable: true }) actionId!: string | null;
  @Column({ type: 'int', unsigned: true }) attempts!: number;
  @Column({ type: 'text', nullable: true }) result!: string | null;
  @Column({ type: 'datetime', precision: 3, name: 'created_at' }) createdAt!: string;
  @Column({ type: 'datetime', precision: 3, name: 'applied_at', nullable: true }) appliedAt!: string | null;
  /**
   * The order a payment decision is still on its way to (`object_id` while the change is pending or applying and
   * its op is one of PAYMENT_HAND_OVER_OPS), else NULL: kept by the database itself, so that every order read
   * finds the decisions WooCommerce has not applied yet by one look-up of a single value in its index, where a
   * join on the status and op lists cost MariaDB a range estimate over two indexes on each read.
   */
  @Column({
    type: 'bigint', unsigned: true, name: 'open_payment_of', nullable: true, insert: false, update: false, generatedType: 'VIRTUAL',
    asExpression: OPEN_PAYMENT_OF,
  }) openPaymentOf!: string | null;
}
