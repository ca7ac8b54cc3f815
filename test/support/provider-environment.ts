import type { FakeCardGateway } from './fake-card-gateway';
import type { FakeMobileWallet } from './fake-mobile-wallet';

/**
 * The settings that point the service at the loopback card gateway and wallet (the wallet's webhooks registered at
 * `walletWebhook`), with reconciliation and card expiry reminders off unless a test turns them on.
 */
export function providerEnvironment(card: FakeCardGateway, wallet: FakeMobileWallet, walletWebhook: { url: string; secret: string }): Record<string, string> {
  return {
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: walletWebhook.url, MOBILE_WALLET_WEBHOOK_SECRET: walletWebhook.secret,
    RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  };
}
