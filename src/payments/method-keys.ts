import type { Provider } from '../../entities';

/** What a charge was made on, for the card schemes' caps: a customer's cards at the gateway, or one wallet agreement. */
export function chargeMethodKey(provider: Provider, meta: { customer_handle?: string; agreement_id?: string }): string | null {
  if (provider === 'card_gateway') return meta.customer_handle ? `card_gateway:customer:${meta.customer_handle}` : null;
  return meta.agreement_id ? `mobile_wallet:agreement:${meta.agreement_id}` : null;
}

/**
 * Where a new payment method for a failed renewal would be saved: the gateway customer's cards, or a new
 * wallet agreement of the subscription.
 */
export function newMethodKey(provider: Provider, meta: { customer_handle?: string }, subscriptionId: number): string | null {
  if (provider === 'card_gateway') return meta.customer_handle ? `card_gateway:customer:${meta.customer_handle}` : null;
  return `mobile_wallet:subscription:${subscriptionId}`;
}
