import type { Provider } from '../../../entities';
import type { Config } from '../../config';

export type ProviderSetup = Record<Provider, { configured: true } | { configured: false; unset: string }>;

/**
 * Whether each provider is configured, and when it is not, what is unset. One that is not is never called: the
 * worker, `payment-hub reconcile`, staff's reconcile of an order and `doctor` skip it, and say why with this.
 */
export function providerSetup(config: Pick<Config, 'cardGateway' | 'mobileWallet'>): ProviderSetup {
  const wallet = config.mobileWallet;
  const walletUnset = ([
    ['MOBILE_WALLET_CLIENT_ID', wallet.clientId], ['MOBILE_WALLET_CLIENT_SECRET', wallet.clientSecret],
    ['MOBILE_WALLET_SUBSCRIPTION_KEY', wallet.subscriptionKey], ['MOBILE_WALLET_MSN', wallet.merchantSerialNumber],
  ] as const).filter(([, value]) => !value).map(([name]) => name);
  return {
    card_gateway: config.cardGateway.apiKey ? { configured: true } : { configured: false, unset: 'CARD_GATEWAY_API_KEY unset' },
    mobile_wallet: walletUnset.length ? { configured: false, unset: `${walletUnset.join(', ')} unset` } : { configured: true },
  };
}

/** The providers that are configured, the ones ever called. */
export function configuredProviders(config: Pick<Config, 'cardGateway' | 'mobileWallet'>): Provider[] {
  return (Object.entries(providerSetup(config)) as [Provider, { configured: boolean }][]).filter(([, setup]) => setup.configured).map(([provider]) => provider);
}
