import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

// WooCommerce tables: order items (both storage modes) and the HPOS order tables.
// Names are without the site's `$table_prefix`, which the naming strategy adds.

@Entity({ name: 'woocommerce_order_items', synchronize: false })
export class OrderItem {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'order_item_id' }) id!: string;
  @Column({ type: 'text', name: 'order_item_name' }) name!: string;
  @Column({ type: 'varchar', length: 200, name: 'order_item_type' }) type!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
}

@Entity({ name: 'woocommerce_order_itemmeta', synchronize: false })
export class OrderItemMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'meta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_item_id' }) orderItemId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}

@Entity({ name: 'wc_orders', synchronize: false })
export class HposOrder {
  @PrimaryColumn({ type: 'bigint', unsigned: true, name: 'id' }) id!: string;
  @Column({ type: 'varchar', length: 20, name: 'status', nullable: true }) status!: string | null;
  @Column({ type: 'varchar', length: 10, name: 'currency', nullable: true }) currency!: string | null;
  @Column({ type: 'varchar', length: 20, name: 'type', nullable: true }) type!: string | null;
  @Column({ type: 'decimal', precision: 26, scale: 8, name: 'tax_amount', nullable: true }) taxAmount!: string | null;
  @Column({ type: 'decimal', precision: 26, scale: 8, name: 'total_amount', nullable: true }) totalAmount!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'customer_id', nullable: true }) customerId!: string | null;
  @Column({ type: 'varchar', length: 320, name: 'billing_email', nullable: true }) billingEmail!: string | null;
  @Column({ type: 'datetime', name: 'date_created_gmt', nullable: true }) dateCreatedGmt!: string | null;
  @Column({ type: 'datetime', name: 'date_updated_gmt', nullable: true }) dateUpdatedGmt!: string | null;
  @Column({ type: 'bigint', unsigned: true, name: 'parent_order_id', nullable: true }) parentOrderId!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'payment_method', nullable: true }) paymentMethod!: string | null;
  @Column({ type: 'text', name: 'payment_method_title', nullable: true }) paymentMethodTitle!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'transaction_id', nullable: true }) transactionId!: string | null;
  @Column({ type: 'text', name: 'customer_note', nullable: true }) customerNote!: string | null;
}

@Entity({ name: 'wc_order_addresses', synchronize: false })
export class HposOrderAddress {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'varchar', length: 20, name: 'address_type', nullable: true }) addressType!: string | null;
  @Column({ type: 'text', name: 'first_name', nullable: true }) firstName!: string | null;
  @Column({ type: 'text', name: 'last_name', nullable: true }) lastName!: string | null;
  @Column({ type: 'text', name: 'country', nullable: true }) country!: string | null;
  @Column({ type: 'varchar', length: 320, name: 'email', nullable: true }) email!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'phone', nullable: true }) phone!: string | null;
}

@Entity({ name: 'wc_order_operational_data', synchronize: false })
export class HposOrderOperationalData {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id', nullable: true }) orderId!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'created_via', nullable: true }) createdVia!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'order_key', nullable: true }) orderKey!: string | null;
  @Column({ type: 'datetime', name: 'date_paid_gmt', nullable: true }) datePaidGmt!: string | null;
  @Column({ type: 'datetime', name: 'date_completed_gmt', nullable: true }) dateCompletedGmt!: string | null;
}

@Entity({ name: 'wc_orders_meta', synchronize: false })
export class HposOrderMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id', nullable: true }) orderId!: string | null;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'text', name: 'meta_value', nullable: true }) value!: string | null;
}
