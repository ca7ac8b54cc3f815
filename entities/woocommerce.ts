import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

// WooCommerce tables as WC_Install and OrdersTableDataStore create them: order items (both storage modes)
// and the HPOS order tables, with their real columns and index names. Names are without the site's
// `$table_prefix`, which the naming strategy adds; index prefix lengths are WooCommerce's and not repeated.

@Entity({ name: 'woocommerce_order_items', synchronize: false })
@Index('order_id', ['orderId'])
export class OrderItem {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'order_item_id' }) id!: string;
  @Column({ type: 'text', name: 'order_item_name' }) name!: string;
  @Column({ type: 'varchar', length: 200, name: 'order_item_type', default: '' }) type!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
}

@Entity({ name: 'woocommerce_order_itemmeta', synchronize: false })
@Index('order_item_id', ['orderItemId'])
@Index('meta_key', ['key'])
export class OrderItemMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'meta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_item_id' }) orderItemId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}

/** An order, refund or subscription in HPOS storage; in posts storage the same order is a `Post` with its `PostMeta`. */
@Entity({ name: 'wc_orders', synchronize: false })
@Index('status', ['status'])
@Index('date_created', ['dateCreatedGmt'])
@Index('customer_id_billing_email', ['customerId', 'billingEmail'])
@Index('billing_email', ['billingEmail'])
@Index('type_status_date', ['type', 'status', 'dateCreatedGmt'])
@Index('parent_order_id', ['parentOrderId'])
@Index('date_updated', ['dateUpdatedGmt'])
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
  @Column({ type: 'varchar', length: 100, name: 'ip_address', nullable: true }) ipAddress!: string | null;
  @Column({ type: 'text', name: 'user_agent', nullable: true }) userAgent!: string | null;
  @Column({ type: 'text', name: 'customer_note', nullable: true }) customerNote!: string | null;
}

@Entity({ name: 'wc_order_addresses', synchronize: false })
@Index('order_id', ['orderId'])
@Index('address_type_order_id', ['addressType', 'orderId'], { unique: true })
@Index('email', ['email'])
@Index('phone', ['phone'])
export class HposOrderAddress {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  /** `billing` or `shipping`. */
  @Column({ type: 'varchar', length: 20, name: 'address_type', nullable: true }) addressType!: string | null;
  @Column({ type: 'text', name: 'first_name', nullable: true }) firstName!: string | null;
  @Column({ type: 'text', name: 'last_name', nullable: true }) lastName!: string | null;
  @Column({ type: 'text', name: 'company', nullable: true }) company!: string | null;
  @Column({ type: 'text', name: 'address_1', nullable: true }) address1!: string | null;
  @Column({ type: 'text', name: 'address_2', nullable: true }) address2!: string | null;
  @Column({ type: 'text', name: 'city', nullable: true }) city!: string | null;
  @Column({ type: 'text', name: 'state', nullable: true }) state!: string | null;
  @Column({ type: 'text', name: 'postcode', nullable: true }) postcode!: string | null;
  @Column({ type: 'text', name: 'country', nullable: true }) country!: string | null;
  @Column({ type: 'varchar', length: 320, name: 'email', nullable: true }) email!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'phone', nullable: true }) phone!: string | null;
}

@Entity({ name: 'wc_order_operational_data', synchronize: false })
@Index('order_id', ['orderId'], { unique: true })
@Index('order_key', ['orderKey'])
export class HposOrderOperationalData {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id', nullable: true }) orderId!: string | null;
  @Column({ type: 'varchar', length: 100, name: 'created_via', nullable: true }) createdVia!: string | null;
  @Column({ type: 'varchar', length: 20, name: 'woocommerce_version', nullable: true }) woocommerceVersion!: string | null;
  @Column({ type: 'tinyint', name: 'prices_include_tax', nullable: true }) pricesIncludeTax!: number | null;
  @Column({ type: 'tinyint', name: 'coupon_usages_are_counted', nullable: true }) couponUsagesAreCounted!: number | null;
  @Column({ type: 'tinyint', name: 'download_permission_granted', nullable: true }) downloadPermissionGranted!: number | null;
  @Column({ type: 'varchar', length: 100, name: 'cart_hash', nullable: true }) cartHash!: string | null;
  @Column({ type: 'tinyint', name: 'new_order_email_sent', nullable: true }) newOrderEmailSent!: number | null;
  @Column({ type: 'varchar', length: 100, name: 'order_key', nullable: true }) orderKey!: string | null;
  @Column({ type: 'tinyint', name: 'order_stock_reduced', nullable: true }) orderStockReduced!: number | null;
  @Column({ type: 'datetime', name: 'date_paid_gmt', nullable: true }) datePaidGmt!: string | null;
  @Column({ type: 'datetime', name: 'date_completed_gmt', nullable: true }) dateCompletedGmt!: string | null;
  @Column({ type: 'decimal', precision: 26, scale: 8, name: 'shipping_tax_amount', nullable: true }) shippingTaxAmount!: string | null;
  @Column({ type: 'decimal', precision: 26, scale: 8, name: 'shipping_total_amount', nullable: true }) shippingTotalAmount!: string | null;
  @Column({ type: 'decimal', precision: 26, scale: 8, name: 'discount_tax_amount', nullable: true }) discountTaxAmount!: string | null;
  @Column({ type: 'decimal', precision: 26, scale: 8, name: 'discount_total_amount', nullable: true }) discountTotalAmount!: string | null;
  @Column({ type: 'tinyint', name: 'recorded_sales', nullable: true }) recordedSales!: number | null;
}

@Entity({ name: 'wc_orders_meta', synchronize: false })
@Index('meta_key_value', ['key', 'value'])
@Index('order_id_meta_key_meta_value', ['orderId', 'key', 'value'])
export class HposOrderMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id', nullable: true }) orderId!: string | null;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'text', name: 'meta_value', nullable: true }) value!: string | null;
}

/** WooCommerce Subscriptions' store of failed-payment retries. */
@Entity({ name: 'wcs_payment_retries', synchronize: false })
@Index('order_id', ['orderId'])
export class SubscriptionPaymentRetry {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'retry_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'order_id' }) orderId!: string;
  @Column({ type: 'varchar', length: 255, name: 'status' }) status!: string;
  @Column({ type: 'datetime', name: 'date_gmt' }) dateGmt!: string;
  @Column({ type: 'text', name: 'rule_raw', nullable: true }) ruleRaw!: string | null;
}

/** WooCommerce's saved payment methods (WC_Payment_Token): a gateway plugin's saved card of a customer. */
@Entity({ name: 'woocommerce_payment_tokens', synchronize: false })
@Index('user_id', ['userId'])
export class PaymentToken {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'token_id' }) id!: string;
  @Column({ type: 'varchar', length: 200, name: 'gateway_id' }) gatewayId!: string;
  @Column({ type: 'text', name: 'token' }) token!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'user_id', default: 0 }) userId!: string;
  @Column({ type: 'varchar', length: 200, name: 'type' }) type!: string;
  @Column({ type: 'tinyint', name: 'is_default', default: 0 }) isDefault!: number;
}

/** A saved payment method's details (WC_Payment_Token_CC: `card_type`, `last4`, `expiry_month`, `expiry_year`). */
@Entity({ name: 'woocommerce_payment_tokenmeta', synchronize: false })
@Index('payment_token_id', ['paymentTokenId'])
export class PaymentTokenMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'meta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'payment_token_id' }) paymentTokenId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}
