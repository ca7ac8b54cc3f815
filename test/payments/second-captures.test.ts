import test from 'ava';
import { createShopDataSource } from '../../src/data-access/data-source';
import type { Logger } from '../../src/logger';
import { startWorker, type RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, sendCardGatewayEvent } from '../support/fake-card-gateway';
import { eventually } from '../support/payment-hub-fixture';
import { basic, request } from '../support/http-client';
import { parsePrometheusText, total } from '../support/prometheus-text';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';
import { createApiKey, createStaffUser, type ApiKey } from '../support/wordpress-fixtures';

// One renewal, one payment: an order captured twice, from anywhere, is flagged by the worker's sweep (here every
// 250 ms instead of every minute) with a note on the order, a warning in the order's payments route, /metrics and
// the log, once, and nothing is refunded. The worker's clock is pinned: the payments it records and the sweep's
// window are both in its time.

const NOW = new Date('2026-11-24T10:15:00.000Z');
const gmt = (date: Date) => date.toISOString().slice(0, 23).replace('T', ' ');

let shop: TestShop;
let fake: FakeCardGateway;
let api: RunningApi;
let worker: RunningWorker;
let key: ApiKey;
/** What the workers logged as warnings. */
const warnings: { event: string; fields?: Record<string, unknown> }[] = [];
const log: Logger = { info: () => undefined, warn: (event, fields) => warnings.push({ event, fields }), error: () => undefined };

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const notesOf = async (orderId: number) => (await q(
  `SELECT comment_content FROM ${shop.prefix}comments WHERE comment_post_ID = ? AND comment_type = 'order_note' ORDER BY comment_ID`, [orderId])).map((row) => String(row.comment_content));
// The shop is Danish (WPLANG da_DK): the service's notes are in Danish.
const secondCaptureNotes = async (orderId: number) => (await notesOf(orderId)).filter((note) => note.startsWith('Betalt to gange'));
const paymentOf = async (provider: string, externalId: string) => (await q(`SELECT * FROM ${shop.prefix}sidecar_payments WHERE provider = ? AND external_id = ?`, [provider, externalId]))[0];
const metaOf = async (paymentId: number) => Object.fromEntries((await q(`SELECT meta_key, meta_value FROM ${shop.prefix}sidecar_payment_meta WHERE payment_id = ?`, [paymentId]))
  .map((row) => [row.meta_key, row.meta_value]));
const orderPayments = async (orderId: number) => {
  const res = await request(api.url, 'GET', `/payment-hub/v1/orders/${orderId}/payments`, { headers: { authorization: basic(key.consumerKey, key.consumerSecret), 'x-forwarded-proto': 'https' } });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return res.json;
};
const metrics = async () => parsePrometheusText((await request(api.url, 'GET', '/metrics')).text);
const settle = async (handle: string, amount: number) => {
  fake.setInvoice(handle, { state: 'settled', amount });
  const { res, eventId } = await sendCardGatewayEvent(api.url, { event_type: 'invoice_settled', invoice: handle }, fake.webhookSecret);
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  await eventually(async () => (await q(`SELECT status FROM ${shop.prefix}sidecar_webhooks WHERE external_id = ? AND status <> 'PENDING'`, [eventId]))[0], 10_000, `webhook ${eventId}`);
};

/** A pending renewal whose card-gateway invoice is `handle`. */
async function renewalOrder(handle: string): Promise<number> {
  return shop.seeder.createOrder({
    status: 'pending', total: '99.00', currency: 'DKK', billing: { email: 'twice@example.dk', country: 'DK' }, createdVia: 'subscription',
    meta: { _reepay_order: handle },
  });
}

/** A wallet charge of the order the wallet has captured, as the service recorded it at `at`. */
async function capturedWalletCharge(orderId: number, chargeId: string, at: Date): Promise<number> {
  const [result] = await shop.db.query(
    `INSERT INTO ${shop.prefix}sidecar_payments (provider, external_id, status, order_id, amount_minor, currency, created_at, updated_at)
     VALUES ('mobile_wallet', ?, 'CAPTURED', ?, 9900, 'DKK', ?, ?)`, [chargeId, orderId, gmt(at), gmt(at)]);
  return (result as { insertId: number }).insertId;
}

function startSweepingWorker(): RunningWorker {
  const dataSource = createShopDataSource(shop.config().db, 4);
  const config = shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey });
  const running = dataSource.initialize().then(() => startWorker({
    config, dataSource, log, clock: () => NOW, sweepIntervalMs: 200, sweepGraceSeconds: 1, dunningIntervalMs: 200, secondCapturesIntervalMs: 250,
  }));
  return {
    name: 'second-captures-test',
    tick: async () => (await running).tick(),
    stop: async (graceMs?: number) => (await running).stop(graceMs),
  };
}

test.before(async () => {
  shop = await createTestShop('second_captures', { hpos: true });
  fake = new FakeCardGateway();
  await fake.start();
  api = await startApi(shop.config({ CARD_GATEWAY_API_URL: fake.url, CARD_GATEWAY_API_KEY: fake.apiKey }));
  worker = startSweepingWorker();
  const manager = await createStaffUser(shop, { login: 'mads', roles: ['shop_manager'] });
  key = await createApiKey(shop, manager.id, 'read_write');
});

test.after.always(async () => {
  await worker?.stop();
  await api?.stop();
  await fake?.stop();
  await shop?.drop();
});

test.serial('When the card gateway settles an order the wallet had already captured, Then within the sweep the later capture is flagged once: a note, the route\'s warning and /metrics, and nothing is refunded', async (t) => {
  const orderId = await renewalOrder('inv-twice-1');
  const walletId = await capturedWalletCharge(orderId, 'charge-twice-1', new Date(NOW.getTime() - 10 * 60_000));
  const before = await metrics();
  t.is(total(before, 'sidecar_payments_captured_twice_total'), 0);
  t.is(total(before, 'sidecar_payments_captured_twice_unresolved'), 0);

  await settle('inv-twice-1', 9900);
  const card = await paymentOf('card_gateway', 'inv-twice-1');
  t.is(card.status, 'CAPTURED');
  t.is(Number(card.order_id), orderId);

  // The note, from the worker's own loop.
  const note = await eventually(async () => (await secondCaptureNotes(orderId))[0], 10_000, 'the second capture\'s note');
  t.is(note, 'Betalt to gange: betalingen inv-twice-1 (Kort (Frisbii), 99,00 DKK) blev trukket, efter at betalingen charge-twice-1 (MobilePay, 99,00 DKK) '
    + 'allerede havde betalt ordren. Refundér inv-twice-1, den seneste, hos Frisbii; intet refunderes automatisk.');
  t.deepEqual(await metaOf(Number(card.id)), { second_capture_of: String(walletId) }, 'the later capture is flagged, naming the one that paid');
  t.deepEqual(await metaOf(walletId), {}, 'the payment that paid the order is not');
  t.deepEqual(warnings.filter((line) => line.event === 'second_capture_flagged').map((line) => line.fields), [{
    orderId, refundPaymentId: Number(card.id), refundExternalId: 'inv-twice-1', provider: 'card_gateway', amountMinor: 9900, currency: 'DKK',
    keptPaymentId: walletId, keptExternalId: 'charge-twice-1', keptProvider: 'mobile_wallet', paidOutside: false, withdrawnBecause: null,
  }]);

  const shown = await orderPayments(orderId);
  t.deepEqual(shown.warnings, [{
    code: 'captured_twice',
    message: 'Second capture: payment inv-twice-1 (card_gateway, 99.00 DKK) was captured after payment charge-twice-1 (mobile_wallet, 99.00 DKK) '
      + 'had already paid this order. Refund inv-twice-1, the later capture, at card_gateway; nothing is refunded automatically.',
    payment_ids: [Number(card.id), walletId],
    refund: { id: Number(card.id), provider: 'card_gateway', external_id: 'inv-twice-1', amount: 9900, currency: 'DKK' },
    kept: { id: walletId, provider: 'mobile_wallet', external_id: 'charge-twice-1', amount: 9900, currency: 'DKK' },
  }]);
  const flagged = await metrics();
  t.is(total(flagged, 'sidecar_payments_captured_twice_total', { provider: 'card_gateway' }), 1);
  t.is(total(flagged, 'sidecar_payments_captured_twice_total', { provider: 'mobile_wallet' }), 0);
  t.is(total(flagged, 'sidecar_payments_captured_twice_unresolved', { provider: 'card_gateway' }), 1);

  // More passes (the loop's and two whole ticks), and a worker started afresh: nothing is flagged again.
  await worker.tick();
  await worker.tick();
  await new Promise((resolve) => setTimeout(resolve, 600));
  await worker.stop();
  worker = startSweepingWorker();
  await worker.tick();
  t.is((await secondCaptureNotes(orderId)).length, 1, 'one note');
  t.is(warnings.filter((line) => line.event === 'second_capture_flagged').length, 1, 'one log line');
  t.is(total(await metrics(), 'sidecar_payments_captured_twice_total'), 1, 'counted once');
  t.deepEqual(fake.writes(), [], 'nothing refunded (nor anything else asked of the gateway)');
  t.is((await paymentOf('card_gateway', 'inv-twice-1')).status, 'CAPTURED');
  t.is((await paymentOf('mobile_wallet', 'charge-twice-1')).status, 'CAPTURED');

  // Staff refund the later capture at the gateway: the warning and the gauge go; the count stays, no new note.
  fake.setInvoice('inv-twice-1', { state: 'settled', amount: 9900, refunded_amount: 9900, credit_notes: [{ id: 'cn-twice', amount: 9900 }] });
  const refund = await sendCardGatewayEvent(api.url, { event_type: 'invoice_refund', invoice: 'inv-twice-1' }, fake.webhookSecret);
  t.is(refund.res.status, 200);
  await eventually(async () => (await paymentOf('card_gateway', 'inv-twice-1')).status === 'REFUNDED', 10_000, 'the refund');
  await worker.tick();
  t.deepEqual((await orderPayments(orderId)).warnings, []);
  const resolved = await metrics();
  t.is(total(resolved, 'sidecar_payments_captured_twice_unresolved'), 0);
  t.is(total(resolved, 'sidecar_payments_captured_twice_total', { provider: 'card_gateway' }), 1);
  t.is((await secondCaptureNotes(orderId)).length, 1);
});

test.serial('When an order has one captured payment beside failed ones, or two orders are each captured once, Then nothing is flagged', async (t) => {
  const orderId = await renewalOrder('inv-once-1');
  await shop.db.query(
    `INSERT INTO ${shop.prefix}sidecar_payments (provider, external_id, status, order_id, amount_minor, currency, created_at, updated_at)
     VALUES ('mobile_wallet', 'charge-failed-1', 'FAILED', ?, 9900, 'DKK', ?, ?)`, [orderId, gmt(NOW), gmt(NOW)]);
  const other = await renewalOrder('inv-once-2');
  await settle('inv-once-1', 9900);
  await settle('inv-once-2', 9900);
  await worker.tick();
  await worker.tick();
  t.deepEqual(await secondCaptureNotes(orderId), []);
  t.deepEqual(await secondCaptureNotes(other), []);
  t.deepEqual((await orderPayments(orderId)).warnings, []);
  t.deepEqual(await metaOf(Number((await paymentOf('card_gateway', 'inv-once-1')).id)), {});
});

test.serial('When an order is captured three times, Then each later capture is flagged once, naming the first', async (t) => {
  const orderId = await renewalOrder('inv-thrice-1');
  const first = await capturedWalletCharge(orderId, 'charge-thrice-1', new Date(NOW.getTime() - 20 * 60_000));
  const second = await capturedWalletCharge(orderId, 'charge-thrice-2', new Date(NOW.getTime() - 15 * 60_000));
  await settle('inv-thrice-1', 9900);
  await worker.tick();
  const notes = await secondCaptureNotes(orderId);
  t.is(notes.length, 2, notes.join(' | '));
  t.true(notes.some((note) => note.includes('betalingen charge-thrice-2 (MobilePay, 99,00 DKK) blev trukket, efter at betalingen charge-thrice-1')));
  t.true(notes.some((note) => note.includes('betalingen inv-thrice-1 (Kort (Frisbii), 99,00 DKK) blev trukket, efter at betalingen charge-thrice-1')));
  t.deepEqual(await metaOf(second), { second_capture_of: String(first) });
  const shown = await orderPayments(orderId);
  t.deepEqual(shown.warnings.map((warning: any) => [warning.refund.external_id, warning.kept.external_id]), [['inv-thrice-1', 'charge-thrice-1'], ['charge-thrice-2', 'charge-thrice-1']]);
  await worker.tick();
  t.is((await secondCaptureNotes(orderId)).length, 2);
  const samples = await metrics();
  t.is(total(samples, 'sidecar_payments_captured_twice_unresolved', { provider: 'mobile_wallet' }), 1);
  t.is(total(samples, 'sidecar_payments_captured_twice_unresolved', { provider: 'card_gateway' }), 1);
});
