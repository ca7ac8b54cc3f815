import type { Config } from '../../config';
import { PACKAGE_VERSION } from '../../shared/package-version';
import { CardGatewayClient } from './card-gateway/client';
import { MobileWalletClient } from './mobile-wallet/client';
import type { SharedLimitStore } from './request-limits';

/**
 * The two providers' clients as the configuration sets them up: the hub's (with the limits shared with the other
 * processes) and the start check's (its own, with a shorter bound) are the same clients.
 */
export function providerClients(config: Pick<Config, 'cardGateway' | 'mobileWallet'>, options: { timeoutMs: number; shared?: SharedLimitStore }) {
  const wallet = config.mobileWallet;
  return {
    cardGateway: new CardGatewayClient({
      apiUrl: config.cardGateway.apiUrl, apiKey: config.cardGateway.apiKey ?? '', timeoutMs: options.timeoutMs, limits: config.cardGateway.limits, shared: options.shared,
    }),
    mobileWallet: new MobileWalletClient({
      apiUrl: wallet.apiUrl, clientId: wallet.clientId ?? '', clientSecret: wallet.clientSecret ?? '', subscriptionKey: wallet.subscriptionKey ?? '',
      merchantSerialNumber: wallet.merchantSerialNumber ?? '', timeoutMs: options.timeoutMs,
      system: { name: 'woocommerce', pluginName: 'shop-sidecar', pluginVersion: PACKAGE_VERSION }, shared: options.shared,
    }),
  };
}
