import path from 'node:path';
import test from 'ava';
import { FakeCardGateway } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { serveOverHttp, type ServedShop } from './support/serve-over-http';
import { startServiceBeside, type ServiceBesideShop } from './support/service-beside-shop';
import { createWooCommerceShop, type StorageMode, type WooCommerceShop } from './support/woocommerce-shop';

/**
 * The providers' own WooCommerce plugins, as shops keep them active beside the service: the card gateway's (Frisbii
 * Pay / Reepay Checkout 1.8.15.2) and the wallet's (Pay with Vipps and MobilePay 6.0.5, its recurring gateway),
 * unpacked from ../shared/woocommerce by run.sh, active in their test modes on the current stack (HPOS and posts
 * storage) with the companion, their API calls answered by the loopback fakes
 * (php/mu-plugins/sidecar-test-provider-hosts.php). One shop per storage mode.
 */

const COMPANION = path.resolve(__dirname, '../../../src/woocommerce-companion/shop-sidecar-companion.php');
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-for-the-provider-plugins-test';

interface Stage { shop: WooCommerceShop; served: ServedShop; service: ServiceBesideShop; card: FakeCardGateway; wallet: FakeMobileWallet }
const stages = new Map<StorageMode, Stage>();

async function stage(storage: StorageMode): Promise<Stage> {
  const card = new FakeCardGateway();
  const wallet = new FakeMobileWallet();
  await Promise.all([card.start(), wallet.start()]);
  const shop = await createWooCommerceShop(`plugins_${storage}`, 'current', storage, { companion: COMPANION, providerPlugins: true });
  await shop.php('provider_plugins', {
    card: { url: card.url, private_key: card.apiKey },
    wallet: { url: wallet.url, client_id: wallet.clientId, secret_key: wallet.clientSecret, subscription_key: wallet.subscriptionKey, merchant_serial_number: wallet.merchantSerialNumber },
  });
  const served = await serveOverHttp(shop);
  const service = await startServiceBeside(shop, served, {
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
    DUNNING_PLAN: '2s,2s,2s,2s,2s', RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0',
  });
  shop.env.SIDECAR_SERVICE_URL = `${service.api.url}/`;
  const made = { shop, served, service, card, wallet };
  stages.set(storage, made);
  return made;
}

test.after.always(async () => {
  for (const { shop, served, service, card, wallet } of stages.values()) {
    await service.stop().catch(() => undefined);
    await Promise.allSettled([card.stop(), wallet.stop()]);
    await served.stop().catch(() => undefined);
    if (process.env.SIDECAR_WC_KEEP !== '1') await shop.drop();
  }
});

for (const storage of ['hpos', 'posts'] as StorageMode[]) {
  test.serial(`${storage}: both providers' plugins are active in their test modes, and their gateways, not the stand-ins, answer for reepay_checkout and vipps_recurring`, async (t) => {
    const { shop } = stages.get(storage) ?? await stage(storage);
    const gateways = await shop.php<Record<string, string>>('gateways');
    t.is(gateways.reepay_checkout, 'Reepay\\Checkout\\Gateways\\ReepayCheckout');
    t.is(gateways.vipps_recurring, 'WC_Gateway_Vipps_Recurring');
  });
}
