import test from 'ava';
import type { FakeCardGateway } from '../../support/fake-card-gateway';
import { mobileWalletDelivery, type FakeMobileWallet, type MobileWalletDeliveryEvent } from '../../support/fake-mobile-wallet';
import { request } from '../../support/http-client';
import type { ServedShop } from './serve-over-http';
import type { ServiceBesideShop } from './service-beside-shop';
import type { WooCommerceShop } from './woocommerce-shop';

/** Where the wallet's webhooks for the service are registered in the tests that run the service beside a shop. */
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';

/** A served shop with the service beside it and both providers' fakes: what a test file sets up once per storage mode. */
export interface ProvidersStage { shop: WooCommerceShop; served: ServedShop; service: ServiceBesideShop; card: FakeCardGateway; wallet: FakeMobileWallet }

/** The service's settings for both providers' fakes, with the wallet's webhooks signed with `walletSecret`. */
export function providersEnv(card: FakeCardGateway, wallet: FakeMobileWallet, walletSecret: string): Record<string, string> {
  return {
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: walletSecret,
  };
}

/** After the file's tests, each stage is stopped and its shop's database dropped (kept with SIDECAR_WC_KEEP=1). */
export function stopStagesAfterAll(stages: Map<unknown, ProvidersStage>): void {
  test.after.always(async () => {
    for (const { shop, served, service, card, wallet } of stages.values()) {
      await service.stop().catch(() => undefined);
      await Promise.allSettled([card.stop(), wallet.stop()]);
      await served.stop().catch(() => undefined);
      if (process.env.SIDECAR_WC_KEEP !== '1') await shop.drop();
    }
  });
}

/** A wallet webhook, signed as the wallet signs it for the secret and address the service was given, delivered to it; its status. */
export async function walletWebhook(service: ServiceBesideShop, event: MobileWalletDeliveryEvent): Promise<number> {
  const { webhookSecret: secret, webhookUrl: url } = service.config.mobileWallet;
  if (!secret || !url) throw new Error('the service beside the shop was started without the wallet webhook settings of providersEnv');
  const delivery = mobileWalletDelivery(event, { secret, url });
  return (await request(service.api.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: delivery.headers, body: delivery.body })).status;
}
