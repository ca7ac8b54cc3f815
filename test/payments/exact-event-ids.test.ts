import test from 'ava';
import { request } from '../support/http-client';
import { cardGatewayDelivery, FakeCardGateway, sendCardGatewayEvent, sendInvoiceSettled } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery } from '../support/fake-mobile-wallet';
import { eventually, startTestWorker } from '../support/payment-hub-fixture';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';

// Provider ids are compared byte for byte and stored whole, up to the 255 characters the card gateway documents for handles.

const WALLET_URL = 'https://sidecar.shop.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-webhook-secret-for-exact-ids';

let shop: TestShop;
let cardGateway: FakeCardGateway;
let wallet: FakeMobileWallet;
let api: RunningApi;
let worker: Awaited<ReturnType<typeof startTestWorker>>;

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];

async function deliverCard(event: Parameters<typeof cardGatewayDelivery>[0]) {
  return (await sendCardGatewayEvent(api.url, event, cardGateway.webhookSecret)).res;
}

test.before(async () => {
  shop = await createTestShop('exact_ids');
  cardGateway = new FakeCardGateway();
  wallet = new FakeMobileWallet();
  await Promise.all([cardGateway.start(), wallet.start()]);
  await q(`INSERT INTO ${shop.prefix}sidecar_mobile_wallet_webhooks (registration_id, url, events, secret, created_at) VALUES ('reg-1', ?, '[]', ?, NOW(3))`, [WALLET_URL, WALLET_SECRET]);
  const config = shop.config({
    CARD_GATEWAY_API_URL: cardGateway.url, CARD_GATEWAY_API_KEY: cardGateway.apiKey, CARD_GATEWAY_WEBHOOK_SECRET: cardGateway.webhookSecret,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
  });
  api = await startApi(config);
  worker = await startTestWorker(config);
});

test.after.always(async () => {
  await worker?.stop();
  await api?.stop();
  await Promise.all([cardGateway?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test('When event ids differ only by case, a trailing space or an accent, Then each is a new event, stored as sent; an exact repeat is a duplicate', async (t) => {
  const ids = ['same-Case', 'same-case', 'same-case ', 'same-cäse', 'same-çase'];
  for (const eventId of ids) {
    const res = await deliverCard({ event_id: eventId, event_type: 'customer_created' });
    t.is(res.json?.status, 'accepted', `${JSON.stringify(eventId)}: ${res.text}`);
  }
  t.is((await deliverCard({ event_id: 'same-case ', event_type: 'customer_created' })).json.status, 'duplicate');
  const rows = await q(`SELECT external_id FROM ${shop.prefix}sidecar_webhooks WHERE external_id LIKE 'same-%'`);
  t.deepEqual(rows.map((row) => row.external_id).sort(), [...ids].sort());
});

test('When an event id has 255 characters, Then it is stored whole; with 256 it is 400 naming event_id and nothing is stored', async (t) => {
  const longest = `evt-${'x'.repeat(251)}`;
  t.is((await deliverCard({ event_id: longest, event_type: 'customer_created' })).json?.status, 'accepted');
  t.is((await q(`SELECT external_id FROM ${shop.prefix}sidecar_webhooks WHERE external_id = ?`, [longest]))[0]?.external_id, longest);

  const tooLong = `${longest}y`;
  const res = await deliverCard({ event_id: tooLong, event_type: 'customer_created' });
  t.is(res.status, 400);
  t.deepEqual(res.json.data, { status: 400, params: ['event_id'] });
  t.deepEqual((await q(`SELECT external_id FROM ${shop.prefix}sidecar_webhooks WHERE external_id LIKE ?`, [`${longest}%`])).map((row) => row.external_id), [longest]);
  t.is((await deliverCard({ event_type: 'invoice_settled', invoice: `inv-${'x'.repeat(252)}` })).status, 400, 'an invoice handle past 255 characters too');
});

test('When invoices differ only by case or a trailing space, Then each is a payment of its own; a 255-character handle is kept whole', async (t) => {
  const handles = ['inv-Exact', 'inv-exact', 'inv-exact ', `inv-${'h'.repeat(251)}`];
  const eventIds: string[] = [];
  for (const handle of handles) {
    const { res, eventId } = await sendInvoiceSettled(api.url, cardGateway, handle);
    t.is(res.status, 200, res.text);
    eventIds.push(eventId);
  }
  await eventually(async () => {
    const rows = await q(`SELECT status FROM ${shop.prefix}sidecar_webhooks WHERE external_id IN (?)`, [eventIds]);
    return rows.length === eventIds.length && rows.every((row) => row.status === 'PROCESSED');
  }, 20_000, 'the invoice events to be processed');
  const payments = await q(`SELECT external_id, status FROM ${shop.prefix}sidecar_payments WHERE provider = 'card_gateway' AND external_id LIKE 'inv-%'`);
  t.deepEqual(payments.map((row) => row.external_id).sort(), [...handles].sort());
  t.true(payments.every((row) => row.status === 'CAPTURED'));
});

test('When wallet agreements differ only by case, Then each is an agreement of its own; an agreement id past 255 characters is 400', async (t) => {
  for (const agreementId of ['agr-Exact', 'agr-exact']) {
    wallet.setAgreement(agreementId, { status: 'ACTIVE' });
    const delivery = mobileWalletDelivery({ eventType: 'recurring.agreement-activated.v1', agreementId }, { secret: WALLET_SECRET, url: WALLET_URL });
    const res = await request(api.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: delivery.headers, body: delivery.body });
    t.is(res.status, 200, res.text);
  }
  const agreements = await q(`SELECT external_id, status FROM ${shop.prefix}sidecar_agreements WHERE provider = 'mobile_wallet'`);
  t.deepEqual(agreements.map((row) => [row.external_id, row.status]).sort(), [['agr-Exact', 'ACTIVE'], ['agr-exact', 'ACTIVE']]);

  const delivery = mobileWalletDelivery({ eventType: 'recurring.agreement-activated.v1', agreementId: `agr-${'x'.repeat(252)}` }, { secret: WALLET_SECRET, url: WALLET_URL });
  const res = await request(api.url, 'POST', '/payment-hub/v1/webhook/mobile_wallet', { headers: delivery.headers, body: delivery.body });
  t.is(res.status, 400, res.text);
});
