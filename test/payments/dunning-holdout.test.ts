import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { holdoutArm, holdoutPosition } from '../../src/dunning/holdout';
import { Z_95 } from '../../src/dunning/recovered-share';
import { paymentHub } from '../support/cli-process';
import { FakeCardGateway, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { openHub, processCardGatewayEvent, startPacedWorker } from '../support/payment-hub-fixture';
import { createTestShop, type TestShop } from '../support/test-shop';

// The holdout (DUNNING_HOLDOUT_PERCENT) through the service as it runs: failed renewals arrive as the card
// gateway's webhooks, each case opens with its stable arm, a baseline case's soft decline is retried on
// WooCommerce Subscriptions' default timing (12 h first) while a service case follows DUNNING_PLAN (2 h here);
// the worker's attempts win some back; then `payment-hub dunning report --json` compares the two arms.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HOLDOUT = 50;

let shop: TestShop;
let card: FakeCardGateway;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
// Forty days ago: every renewal's 28-day window has ended by the time the report (on the real clock) runs.
const start = new Date(Math.floor((Date.now() - 40 * DAY) / HOUR) * HOUR);
let now = start;
const clock = () => now;
const gmt = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');
const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];

function env(extra: Record<string, string> = {}) {
  return shop.config({
    CARD_GATEWAY_API_URL: card.url, CARD_GATEWAY_API_KEY: card.apiKey,
    RECONCILE_ENABLED: 'false', CARD_EXPIRY_REMINDER_DAYS: '0', PRE_RENEWAL_CHECK_DAYS: '0',
    DUNNING_PLAN: '2h,1d', DUNNING_HOLDOUT_PERCENT: String(HOLDOUT),
    ...extra,
  });
}

const cardWebhook = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);

let serial = 0;
/** A renewal of its own customer whose card charge just failed with a soft decline (settle_blocked: not lack of funds, so no payday attempt). */
async function failedRenewal(): Promise<number> {
  serial += 1;
  const customer = `cust-holdout-${serial}`;
  const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', startGmt: new Date(start.getTime() - 30 * DAY), nextPaymentGmt: now });
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', meta: { _subscription_renewal: String(subscriptionId) } });
  card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, customer, error: 'settle_blocked', error_state: 'soft_declined' });
  card.setPaymentMethod(`ca-holdout-${serial}`, { customer });
  if ((await cardWebhook({ event_type: 'invoice_failed', invoice: `order-${orderId}` })) !== 'PROCESSED') throw new Error('failure not processed');
  return orderId;
}

test.before(async () => {
  shop = await createTestShop('dunning_holdout', { hpos: false });
  card = new FakeCardGateway();
  await card.start();
  hub = await openHub(env(), clock);
  worker = await startPacedWorker(env(), clock);
});

test.after.always(async () => {
  await worker?.stop();
  await hub?.close();
  await card?.stop();
  await shop?.drop();
});

test.serial('Given DUNNING_HOLDOUT_PERCENT=50, When renewals fail, retry and are paid, Then each keeps its arm, follows its plan, and the report compares the arms', async (t) => {
  const siteUrl = String((await q(`SELECT option_value FROM ${shop.prefix}options WHERE option_name = 'siteurl'`))[0].option_value);
  // Renewals until each arm has at least four (the order ids decide, stably: see the unit tests for the share).
  const orders: number[] = [];
  const armOf = (orderId: number) => holdoutArm(siteUrl, orderId, HOLDOUT);
  while (orders.length < 60 && (orders.filter((o) => armOf(o) === 'service').length < 4 || orders.filter((o) => armOf(o) === 'baseline').length < 4)) {
    orders.push(await failedRenewal());
  }
  const service = orders.filter((o) => armOf(o) === 'service');
  const baseline = orders.filter((o) => armOf(o) === 'baseline');
  t.true(service.length >= 4 && baseline.length >= 4, `${service.length} service, ${baseline.length} baseline`);

  for (const orderId of orders) {
    const [found] = await q(`SELECT arm, status FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]);
    t.is(found.arm, armOf(orderId), `order ${orderId} at ${holdoutPosition(siteUrl, orderId).toFixed(2)}`);
    const retries = await q(`SELECT plan, status, scheduled_at FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY attempt`, [orderId]);
    const wait = found.arm === 'baseline' ? 12 * HOUR : 2 * HOUR;
    t.deepEqual(retries.map((r) => [r.plan, r.status, r.scheduled_at.slice(0, 19)]), [['soft', 'PENDING', gmt(new Date(start.getTime() + wait))]],
      `order ${orderId} (${found.arm}) retried ${wait / HOUR} h after its failure`);
  }

  // The service's retries at 2 h: the first declined again, the others paid.
  card.queueChargeOutcome({ kind: 'failed', error: 'settle_blocked', errorState: 'soft_declined' });
  now = new Date(start.getTime() + 2 * HOUR);
  await worker.tick();
  // The baseline's at 12 h: the first half paid, the rest declined again (and then left, unpaid, past 28 days).
  const baselinePaid = Math.floor(baseline.length / 2);
  card.queueChargeOutcome(
    ...Array.from({ length: baselinePaid }, () => ({ kind: 'settled' as const })),
    ...Array.from({ length: baseline.length - baselinePaid }, () => ({ kind: 'failed' as const, error: 'settle_blocked', errorState: 'soft_declined' as const })),
  );
  now = new Date(start.getTime() + 12 * HOUR);
  await worker.tick();

  const recovered = async (group: number[]) => (await q(`SELECT COUNT(*) AS n FROM ${shop.prefix}sidecar_dunning_cases WHERE status = 'RECOVERED' AND order_id IN (?)`, [group]))[0].n;
  t.is(Number(await recovered(service)), service.length - 1, 'service: all but the one declined again');
  t.is(Number(await recovered(baseline)), baselinePaid, 'baseline: half');

  const since = new Date(start.getTime() - DAY).toISOString().slice(0, 10);
  const run = await paymentHub(['dunning', 'report', `--since=${since}`, '--json'], { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix });
  t.is(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout);
  t.is(report.failed_renewals, orders.length);
  t.is(report.window_days, 28);
  const p1 = (service.length - 1) / service.length;
  const p2 = baselinePaid / baseline.length;
  const text = (value: number) => (Math.round(value * 10_000) / 10_000).toFixed(4);
  t.deepEqual(report.arms, {
    service: { failed_renewals: service.length, recovered_share: text(p1) },
    baseline: { failed_renewals: baseline.length, recovered_share: text(p2) },
  });
  t.is(report.recovered_share, text((service.length - 1 + baselinePaid) / orders.length));
  // Renewals of one amount each paid in full or not at all: the two-proportion (Wald) interval.
  const half = Z_95 * Math.sqrt((p1 * (1 - p1)) / service.length + (p2 * (1 - p2)) / baseline.length);
  t.is(report.difference, text(p1 - p2));
  t.deepEqual(report.interval, [text(Math.max(-1, p1 - p2 - half)), text(Math.min(1, p1 - p2 + half))]);
  t.is(report.saved_before_failure, 0);

  const plain = await paymentHub(['dunning', 'report', `--since=${since}`], { DB_NAME: shop.dbName, DB_TABLE_PREFIX: shop.prefix });
  t.is(plain.code, 0, plain.stderr);
  t.regex(plain.stdout, /^Holdout \(recovered share\)$/m);
  t.regex(plain.stdout, new RegExp(`^Baseline plan:\\s+${(p2 * 100).toFixed(1)}% of ${baseline.length} renewal\\(s\\)$`, 'm'));
  t.regex(plain.stdout, /^95% interval:\s+[-+]?\d+\.\d to [-+]?\d+\.\d points$/m);
});
