import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type WooCommerceChangeStatus = 'pending' | 'applying' | 'applied' | 'failed';

/**
 * An order or subscription change the service decided and WooCommerce applies: the companion plugin
 * runs it with WooCommerce's own calls when Action Scheduler runs the row's action.
 */
@Entity({ name: 'sidecar_woocommerce_changes' })
@Index('object_status', ['objectId', 'status'])
@Index('status_created', ['status', 'createdAt'])
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
}
