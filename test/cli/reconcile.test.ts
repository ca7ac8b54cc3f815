import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { PAYMENT_HUB, runCommand, type CommandRun } from '../support/cli-process';
import { cardGatewayDelivery, FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { openHub } from '../support/payment-hub-fixture';
import { createTestShop, type TestShop } from '../support/test-shop';

// `payment-hub reconcile` as the operator runs it: the built bin script in a child process, with no stdin.
const WALLET_WEBHOOK_URL = 'https://shop.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-cli-reconcile';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };

function baseEnv(): Record<string, string> {
  return {
    DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix,
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    MOBILE_WALLET_API_URL: wallet.url, MOBILE_WALLET_CLIENT_ID: wallet.clientId, MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey, MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: WALLET_WEBHOOK_URL, MOBILE_WALLET_WEBHOOK_SECRET: WALLET_SECRET,
    RECONCILE_MAX_PER_SECOND: '50',
  };
}

const cli = (args: string[], env: Record<string, string> = {}): Promise<CommandRun> => runCommand(process.execPath, [PAYMENT_HUB, ...args], { env: { ...process.env, ...baseEnv(), ...env } });

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const statusOf = async (id: number) => (await q(`SELECT post_status FROM ${shop.prefix}posts WHERE ID = ?`, [id]))[0].post_status as string;
const paymentsOf = (orderId: number) => q(`SELECT external_id, status FROM ${shop.prefix}sidecar_payments WHERE order_id = ? ORDER BY id`, [orderId]);

/** Every row of the service's own tables and of the shop's orders, meta, notes and scheduled actions. */
async function dump(): Promise<string> {
  const [tables] = await shop.db.query(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ? ORDER BY table_name`, [`${shop.prefix}sidecar%`]);
  const names = [...(tables as { name: string }[]).map((row) => row.name).filter((name) => name !== `${shop.prefix}sidecar_workers`),
    `${shop.prefix}posts`, `${shop.prefix}postmeta`, `${shop.prefix}comments`, `${shop.prefix}commentmeta`, `${shop.prefix}actionscheduler_actions`, `${shop.prefix}options`];
  const out: Record<string, unknown> = {};
  for (const name of names) out[name] = await q(`SELECT * FROM \`${name}\``);
  return JSON.stringify(out);
}

async function cardWebhook(event: CardGatewayDeliveryEvent) {
  const delivery = cardGatewayDelivery(event, card.webhookSecret);
  const stored = await hub.webhooks.insertPending('card_gateway', String(delivery.payload.event_id), event.event_type, delivery.body);
  if (stored.kind !== 'stored') throw new Error('not stored');
  return hub.processCardGatewayWebhook.execute(stored.id);
}

async function walletWebhook(event: MobileWalletDeliveryEvent) {
  const delivery = mobileWalletDelivery(event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
  return hub.receiveMobileWalletWebhook.execute({ method: 'POST', headers: delivery.headers, body: delivery.body });
}

/** A renewal whose card payment failed by webhook and then settled at the gateway, no webhook telling of it. */
async function settledQuietly() {
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', nextPaymentGmt: new Date() });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  const handle = `order-${orderId}`;
  card.setCharge(handle, { state: 'failed', amount: 14900, customer: 'cust-cli', error: 'insufficient_funds', error_state: 'soft_declined' });
  await cardWebhook({ event_type: 'invoice_failed', invoice: handle });
  card.setInvoice(handle, { state: 'settled', amount: 14900, customer: 'cust-cli' });
  return { orderId, subscriptionId, handle };
}

/** A wallet charge reserved by webhook and captured at the wallet with no webhook. */
async function capturedQuietly(tag: string) {
  const agreementId = `agr-cli-${tag}`;
  const chargeId = `chr-cli-${tag}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', meta: { _agreement_id: agreementId } });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId), _charge_id: chargeId } });
  wallet.setAgreement(agreementId);
  wallet.setCharge(agreementId, chargeId, { status: 'RESERVED' });
  await walletWebhook({ eventType: 'recurring.charge-reserved.v1', agreementId, chargeId });
  wallet.setCharge(agreementId, chargeId, { status: 'CHARGED', transactionId: `tx-${tag}` });
  return { orderId, chargeId };
}

test.before(async () => {
  shop = await createTestShop('reconcile_cli', { hpos: false });
  card = new FakeCardGateway();
  wallet = new FakeMobileWallet();
  await Promise.all([card.start(), wallet.start()]);
  hub = await openHub(shop.config(baseEnv()), () => new Date());
});

test.after.always(async () => {
  await hub?.close().catch(() => undefined);
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial('--dry-run prints what it would change and changes nothing, here or at the providers (only reads)', async (t) => {
  const renewal = await settledQuietly();
  const charge = await capturedQuietly('dry');
  const plainOrder = await shop.seeder.createOrder({ status: 'pending', total: '50.00', paymentMethod: 'reepay_checkout' });
  card.setInvoice(`order-${plainOrder}`, { state: 'authorized', amount: 5000, customer: 'cust-plain' });

  const before = await dump();
  const requestsBefore = { card: card.requests.length, wallet: wallet.requests.length };
  const run = await cli(['reconcile', '--all', '--dry-run', '--json']);
  t.is(run.code, 0, run.stderr);
  t.deepEqual(await dump(), before, 'no row of the service or of the shop changed');
  const cardRequests = card.requests.slice(requestsBefore.card);
  const walletRequests = wallet.requests.slice(requestsBefore.wallet);
  t.true(cardRequests.length > 0 && walletRequests.length > 0);
  t.deepEqual(cardRequests.filter((request) => request.method !== 'GET'), [], 'only GETs to the card gateway');
  // The wallet's API needs an access token, whose POST creates nothing there; every call to its APIs is a GET.
  t.deepEqual(walletRequests.filter((request) => request.method !== 'GET').map((request) => request.path).filter((p) => p !== '/accesstoken/get'), [],
    'only GETs to the wallet');

  const output = JSON.parse(run.stdout);
  t.true(output.dry_run);
  t.is(output.scope, 'all');
  const item = (kind: string, externalId: string) => output.items.find((entry: { kind: string; external_id: string }) => entry.kind === kind && entry.external_id === externalId);
  t.like(item('payment', renewal.handle), { provider: 'card_gateway', local_status: 'FAILED', provider_state: 'settled', outcome: 'would_change', events: ['invoice_settled'], notes: [] });
  t.like(item('payment', charge.chargeId), { provider: 'mobile_wallet', local_status: 'AUTHORIZED', provider_state: 'CHARGED', outcome: 'would_change', events: ['recurring.charge-captured.v1'] });
  t.like(item('order', `order-${plainOrder}`), { provider: 'card_gateway', order_id: plainOrder, local_status: 'pending', provider_state: 'authorized', events: ['invoice_authorized'] });

  const text = await cli(['reconcile', '--all', '--dry-run']);
  t.is(text.code, 0);
  t.regex(text.stdout, /dry run: asked about \d+, \d+ would change, 0 could not be asked; nothing was changed/);
  t.deepEqual(await dump(), before);
});

test.serial('--order=N --yes makes that order agree with the provider, and only that order', async (t) => {
  const renewal = await settledQuietly();
  const other = await settledQuietly();
  const run = await cli(['reconcile', `--order=${renewal.orderId}`, '--yes', '--json']);
  t.is(run.code, 0, run.stderr);
  t.deepEqual(await paymentsOf(renewal.orderId), [{ external_id: renewal.handle, status: 'CAPTURED' }]);
  t.is(await statusOf(renewal.orderId), 'wc-processing');
  t.is(await statusOf(renewal.subscriptionId), 'wc-active');
  t.deepEqual(await paymentsOf(other.orderId), [{ external_id: other.handle, status: 'FAILED' }], 'another order is left alone');
  t.is(card.requestsTo('POST', '/v1/charge').length, 0, 'nothing charged');

  // The JSON document: one object, snake_case, what each item came to.
  const output = JSON.parse(run.stdout);
  t.deepEqual(Object.keys(output), ['dry_run', 'scope', 'summary', 'items', 'skipped']);
  t.deepEqual(output.skipped, []);
  t.is(output.dry_run, false);
  t.deepEqual(output.scope, { order_id: renewal.orderId });
  t.deepEqual(output.summary, { checked: 1, found: 1, changed: 1, would_change: 0, unreachable: 0 });
  t.deepEqual(Object.keys(output.items[0]), ['kind', 'provider', 'id', 'external_id', 'order_id', 'local_status', 'provider_state', 'outcome', 'events', 'notes', 'error']);
  t.like(output.items[0], { kind: 'payment', external_id: renewal.handle, order_id: renewal.orderId, outcome: 'changed', events: ['invoice_settled'], error: null });
  t.regex(output.items[0].notes[0], /^invoice_settled: PROCESSED/);

  // A second run finds nothing open about it any more; the late webhook adds nothing either.
  const again = await cli(['reconcile', `--order=${renewal.orderId}`, '--yes']);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /nothing open to ask the providers about/);
  t.like(await cardWebhook({ event_type: 'invoice_settled', invoice: renewal.handle }), { kind: 'done', status: 'SKIPPED' });
});

test.serial('When a provider cannot be asked, Then the run reports it and exits 1, and the item is left as it was', async (t) => {
  const renewal = await settledQuietly();
  card.failNextReads(503, 1, 0, `/v1/invoice/${renewal.handle}`);
  const run = await cli(['reconcile', `--order=${renewal.orderId}`, '--yes', '--json']);
  t.is(run.code, 1);
  t.like(JSON.parse(run.stdout).items[0], { outcome: 'unreachable' });
  t.deepEqual(await paymentsOf(renewal.orderId), [{ external_id: renewal.handle, status: 'FAILED' }]);
});

test.serial('When a provider is not configured (no card gateway key), Then its items are not asked about, and the run says so and exits 0', async (t) => {
  const renewal = await settledQuietly();
  const charge = await capturedQuietly('unconfigured');
  const cardRequests = card.requests.length;
  const unconfigured = { CARD_GATEWAY_API_KEY: '' };

  const run = await cli(['reconcile', '--all', '--dry-run', '--json'], unconfigured);
  t.is(run.code, 0, run.stderr);
  const output = JSON.parse(run.stdout);
  t.is(output.summary.unreachable, 0);
  t.true(output.items.every((item: { provider: string }) => item.provider === 'mobile_wallet'), JSON.stringify(output.items));
  t.true(output.items.some((item: { external_id: string }) => item.external_id === charge.chargeId));
  t.is(output.skipped.length, 1);
  t.like(output.skipped[0], { provider: 'card_gateway', reason: 'CARD_GATEWAY_API_KEY unset' });
  t.true(output.skipped[0].items >= 1);

  const text = await cli(['reconcile', `--order=${renewal.orderId}`, '--dry-run'], unconfigured);
  t.is(text.code, 0, text.stderr);
  t.is(text.stdout, 'nothing open to ask a configured provider about\ncard_gateway: 1 open item not asked about (CARD_GATEWAY_API_KEY unset)\n');
  t.is(card.requests.length, cardRequests, 'the card gateway was not called');
  t.deepEqual(await paymentsOf(renewal.orderId), [{ external_id: renewal.handle, status: 'FAILED' }]);
});

test.serial('Usage errors exit 2 before anything is asked', async (t) => {
  const requests = card.requests.length + wallet.requests.length;
  for (const args of [[], ['--order=1', '--all'], ['--order=0'], ['--order=abc'], ['--all', '--json', '--format=table']]) {
    const run = await cli(['reconcile', ...args]);
    t.is(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    t.regex(run.stderr, /payment-hub: /);
    t.is(run.stdout, '');
  }
  const unattended = await cli(['reconcile', '--all']);
  t.is(unattended.code, 2);
  t.regex(unattended.stderr, /stdin is not a terminal.*--yes/);
  t.is(card.requests.length + wallet.requests.length, requests, 'no provider was asked');
  const missing = await cli(['reconcile', '--order=999999', '--yes']);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /order 999999 does not exist/);
});
