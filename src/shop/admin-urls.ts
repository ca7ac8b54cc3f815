/**
 * Where WP admin edits an order or a subscription: `post.php?post=N&action=edit` with posts storage, and
 * WooCommerce's own screens with HPOS (`admin.php?page=wc-orders&action=edit&id=N`, with `--shop_subscription`
 * appended to the page for subscriptions), as `OrderUtil::get_order_admin_edit_url()` builds them.
 */
export function orderEditUrl(siteUrl: string, id: number, type: 'shop_order' | 'shop_subscription', hpos: boolean): string {
  const admin = `${siteUrl.replace(/\/+$/, '')}/wp-admin/`;
  if (!hpos) return `${admin}post.php?post=${id}&action=edit`;
  const page = type === 'shop_order' ? 'wc-orders' : `wc-orders--${type}`;
  return `${admin}admin.php?page=${page}&action=edit&id=${id}`;
}
