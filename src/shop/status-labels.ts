/** WooCommerce's and WooCommerce Subscriptions' status names, as their notes show them. */
const LABELS: Record<string, string> = {
  pending: 'Pending payment',
  processing: 'Processing',
  'on-hold': 'On hold',
  completed: 'Completed',
  cancelled: 'Cancelled',
  refunded: 'Refunded',
  failed: 'Failed',
  active: 'Active',
  expired: 'Expired',
  'pending-cancel': 'Pending cancellation',
  switched: 'Switched',
};

export function statusLabel(status: string): string {
  return LABELS[status] ?? status;
}

/** The note WooCommerce (`Order status changed …`) or WooCommerce Subscriptions (`Status changed …`) writes on a status change. */
export function statusChangeNote(of: 'order' | 'subscription', from: string, to: string): string {
  return `${of === 'order' ? 'Order status' : 'Status'} changed from ${statusLabel(from)} to ${statusLabel(to)}.`;
}
