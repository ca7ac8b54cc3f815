import type { Provider } from '../../entities';

/**
 * The order metas the providers' own WooCommerce plugins read to find the money on an order, written with the
 * payment when the service's own charge (the charge ledger's) pays a renewal, so that the plugins keep working
 * on what the service did: a refund from the order screen, a capture or cancel of an authorised card payment,
 * their webhook handlers and status checks. They are the metas each plugin writes when it charges a renewal
 * itself (read in their code, ../shared/woocommerce/):
 *
 * - the card gateway's plugin (Frisbii Pay / Reepay Checkout 1.8.15.2) refunds, captures and cancels the invoice
 *   `rp_get_order_handle()` names: the meta `_reepay_order`, else the order number with its handle prefix, which
 *   for a failed renewal is the failed invoice (`includes/Functions/order.php`, `includes/Api.php` refund(),
 *   settle(), cancel_payment()); its webhook handler finds the order by that meta. After a settled charge of its
 *   own it keeps `_reepay_state_settled` = 1 (`OrderFlow/OrderStatuses.php` set_settled_status(), which returns
 *   early once it is set, so a later `invoice_settled` does not complete the order again), after an authorised
 *   one `_reepay_state_authorized` = 1 (set_authorized_status()).
 * - the wallet's plugin (Pay with Vipps and MobilePay 6.0.5, `recurring/`) refunds and cancels the charge
 *   `_charge_id` of the agreement `_agreement_id` (process_refund()); its webhook handler finds the order by
 *   `_charge_id`, and its check of pending charges (check_charge_status()) looks only at an order whose
 *   `_vipps_recurring_pending_charge` is set or whose charge is marked failed. A renewal charge of its own that
 *   went through ends with `_vipps_recurring_pending_charge` false (stored empty), `_vipps_recurring_captured`
 *   true (`1`), `_vipps_recurring_latest_api_status` `CHARGED` and the failure metas of an earlier failed charge
 *   deleted (delete_renewal_meta() before a new charge, complete_order()).
 */
export interface PluginPaymentMetas {
  /** Metas to set (WooCommerce's update_meta_data), in this order. */
  set: Record<string, string>;
  /** Metas to delete. */
  delete: string[];
}

/** The card plugin's handle of the invoice that holds the money. */
export const CARD_ORDER_HANDLE_META = '_reepay_order';
export const CARD_SETTLED_META = '_reepay_state_settled';
export const CARD_AUTHORIZED_META = '_reepay_state_authorized';
/** The settle transaction that took the money, as the card plugin keeps it after a settled charge of its own. */
export const CARD_CAPTURE_TRANSACTION_META = '_reepay_capture_transaction';
/** The saved card the card plugin charged, as its assign_payment_token() names it on the order. */
export const CARD_TOKEN_ID_META = '_reepay_token_id';
export const CARD_TOKEN_METAS = ['reepay_token', '_reepay_token'];
export const WALLET_CHARGE_META = '_charge_id';
export const WALLET_AGREEMENT_META = '_agreement_id';
export const WALLET_LATEST_STATUS_META = '_vipps_recurring_latest_api_status';
export const WALLET_PENDING_META = '_vipps_recurring_pending_charge';
export const WALLET_CAPTURED_META = '_vipps_recurring_captured';
export const WALLET_FAILED_METAS = ['_vipps_recurring_failed_charge', '_vipps_recurring_failed_charge_reason', '_vipps_recurring_failed_charge_description'];

/**
 * What the plugin of `charge.provider` would have on the order had it made this charge itself, once the money is
 * `to`. `charge.paymentMethod` is the ledger's: the wallet's agreement ID, the card's payment method. `savedCardId`
 * is WooCommerce's saved card (WC_Payment_Token) of that card payment method, if it has one: before a renewal charge
 * of its own the card plugin names it on the order (`Tokens/ReepayTokens.php` assign_payment_token(): its ID, then the
 * gateway's token twice), and names nothing when WooCommerce has no such card. `captureTransaction`: the gateway's
 * settle transaction of a settled charge, which the plugin keeps in `_reepay_capture_transaction` (`includes/Api.php`
 * process_charge_result() for a charge answered settled, settle(), and its webhook handler's invoice_settled).
 */
export function pluginPaymentMetas(
  charge: { provider: Provider; externalId: string; paymentMethod: string }, to: 'CAPTURED' | 'AUTHORIZED', savedCardId: number | null = null, captureTransaction: string | null = null,
): PluginPaymentMetas {
  if (charge.provider === 'card_gateway') {
    const card = savedCardId === null ? {} : { [CARD_TOKEN_ID_META]: String(savedCardId), ...Object.fromEntries(CARD_TOKEN_METAS.map((key) => [key, charge.paymentMethod])) };
    const settled: Record<string, string> = to === 'CAPTURED'
      ? { ...(captureTransaction ? { [CARD_CAPTURE_TRANSACTION_META]: captureTransaction } : {}), [CARD_SETTLED_META]: '1' }
      : { [CARD_AUTHORIZED_META]: '1' };
    return { set: { ...card, [CARD_ORDER_HANDLE_META]: charge.externalId, ...settled }, delete: [] };
  }
  if (to === 'AUTHORIZED') {
    // A reserved wallet charge: the plugin names it, and leaves the capture to whoever reserved it.
    return { set: { [WALLET_CHARGE_META]: charge.externalId, [WALLET_AGREEMENT_META]: charge.paymentMethod, [WALLET_LATEST_STATUS_META]: 'RESERVED' }, delete: [] };
  }
  return {
    set: {
      [WALLET_CHARGE_META]: charge.externalId,
      [WALLET_AGREEMENT_META]: charge.paymentMethod,
      [WALLET_LATEST_STATUS_META]: 'CHARGED',
      [WALLET_PENDING_META]: '',
      [WALLET_CAPTURED_META]: '1',
    },
    delete: WALLET_FAILED_METAS,
  };
}
