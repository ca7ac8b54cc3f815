import test from 'ava';
import { cardGatewayDelivery, FakeCardGateway } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery } from '../support/fake-mobile-wallet';
import { request } from '../support/http-client';
import { PrivateMariaDb } from '../support/private-mariadb';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// Both webhook routes against a database server of this test's own, which it stops: the providers must
// be told to send the event again (503 with Retry-After), never given a 500, which they retry later or not.

const REGISTERED_URL = 'https://sidecar.shop.example.dk/payment-hub/v1/webhook/mobile_wallet';
const SECRET = 'A0+AeKBRG2KRGvnNwJpQlb6IJFk48CKXCIcrLoHncVJKDILsQSxS6NWCccwWm6r6FhGKhiHTBsG2wo/xU6FY/A==';

let database: PrivateMariaDb;
let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let api: RunningApi;

test.before(async () => {
  database = await PrivateMariaDb.start();
  shop = await createTestShop('webhooks_db_down', { host: database.host, port: database.port });
  card = new FakeCardGateway();
  wallet = new FakeMobileWallet();
  await Promise.all([card.start(), wallet.start()]);
  await shop.db.query(`INSERT INTO ${shop.prefix}sidecar_mobile_wallet_webhooks (registration_id, url, events, secret, created_at) VALUES ('reg-1', ?, '[]', ?, NOW(3))`, [REGISTERED_URL, SECRET]);
  api = await startApi(shop.config({
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: card.webhookSecret,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
  }));
});

test.after.always(async () => {
  await api?.stop();
  await Promise.all([card?.stop(), wallet?.stop()]);
  await database?.cleanup();
});

test('When the database is down, Then both webhook routes answer 503 with Retry-After, and once it is back the redelivered events are taken', async (t) => {
  wallet.setAgreement('agr-down', { status: 'ACTIVE' });
  const walletDelivery = mobileWalletDelivery({ eventType: 'recurring.agreement-activated.v1', agreementId: 'agr-down' }, { secret: SECRET, url: REGISTERED_URL });
  card.setInvoice('inv-down', { state: 'settled', amount: 1000 });
  const cardDelivery = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: 'inv-down' }, card.webhookSecret);
  const send = () => Promise.all([
    request(api.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: walletDelivery.headers, body: walletDelivery.body }),
    request(api.url, 'POST', '/payment-hub/v1/webhook/card_gateway', { headers: cardDelivery.headers, body: cardDelivery.body }),
  ]);

  await database.stop();
  for (const res of await send()) {
    t.is(res.status, 503, res.text);
    t.is(res.json.code, 'service_unavailable');
    t.regex(String(res.headers['retry-after']), /^\d+$/);
  }

  await database.start();
  const [walletAgain, cardAgain] = await send();
  t.is(walletAgain.status, 200, walletAgain.text);
  t.is(cardAgain.status, 200, cardAgain.text);
  const [[agreement]] = await shop.db.query(`SELECT status FROM ${shop.prefix}sidecar_agreements WHERE external_id = 'agr-down'`) as any[];
  t.is(agreement.status, 'ACTIVE');
});
