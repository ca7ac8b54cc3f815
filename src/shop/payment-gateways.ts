import type { Provider } from '../../entities';

/** The card gateway's WooCommerce gateways are all `reepay_...` (reepay_checkout, reepay_mobilepay, ...). */
export const CARD_GATEWAY_METHOD_PREFIX = 'reepay';
/** The wallet's WooCommerce gateway ids begin so (`vipps_mobilepay_recurring`, the official plugin's `vipps_recurring`). */
export const WALLET_METHOD_PREFIX = 'vipps';

/**
 * The provider behind a WooCommerce payment gateway id (an order's or a subscription's `_payment_method`): the card
 * gateway for its plugin's `reepay_…` gateways, the mobile wallet for `vipps…`; null for any other gateway (a bank
 * transfer, manual renewal, none), which the service does not charge.
 */
export function providerOfGateway(gateway: string | null | undefined): Provider | null {
  const id = gateway?.trim() ?? '';
  if (id.startsWith(CARD_GATEWAY_METHOD_PREFIX)) return 'card_gateway';
  if (id.startsWith(WALLET_METHOD_PREFIX)) return 'mobile_wallet';
  return null;
}
