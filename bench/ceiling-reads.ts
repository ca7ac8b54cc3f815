/**
 * The order status route's reads for posts storage, as the bare programs make them (bench/ceiling.ts,
 * bench/ceiling-restify.ts): the order, its meta, and its items and refunds, three statements in one round trip.
 */
export const ORDER_STATUS_READS = (p: string): string => `SELECT p.ID AS id, p.post_type AS type, p.post_status AS status, p.post_date_gmt AS date_created_gmt
    FROM ${p}posts p WHERE p.ID IN (?) AND p.post_type = 'shop_order' AND p.post_status NOT IN ('trash', 'auto-draft', 'draft', 'wc-checkout-draft');
  SELECT m.post_id AS id, m.meta_key, m.meta_value FROM ${p}postmeta m WHERE m.post_id IN (?);
  SELECT i.order_id, i.order_item_id, i.order_item_name, i.order_item_type, im.meta_key, im.meta_value
    FROM ${p}woocommerce_order_items i LEFT JOIN ${p}woocommerce_order_itemmeta im ON im.order_item_id = i.order_item_id
    WHERE i.order_id IN (?)
  UNION ALL SELECT r.post_parent, NULL, NULL, NULL, NULL, r.ID FROM ${p}posts r FORCE INDEX (post_parent)
    WHERE r.post_parent IN (?) AND r.post_type = 'shop_order_refund'`;
