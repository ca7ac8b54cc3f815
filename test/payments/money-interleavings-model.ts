import test from 'ava';
import fc from 'fast-check';
import type { Provider } from '../../entities';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import { renewalWantsMoney, takenForNobody } from '../../src/payments/renewal-wants-money';
import { shopEventsKey, signHandOver } from '../../src/woocommerce-handover/handover-signature';
import { FakeCardGateway, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { FakeMobileWallet, mobileWalletDelivery, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { request } from '../support/http-client';
import { announceCompanion, openHub, processCardGatewayEvent } from '../support/payment-hub-fixture';
import { startPacedWorkerProcess, type PacedWorkerProcess } from '../support/paced-worker-process';
import { providerEnvironment } from '../support/provider-environment';
import { startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { createTestShop, startApi, type RunningApi, type TestShop } from '../support/test-shop';
import { createStaffUser, logIn, WP_SECRETS, WP_SECRETS_ENV, type StaffSession, type StaffUser } from '../support/wordpress-fixtures';

// One renewal, one payment, and money only while the renewal wants it, by randomised interleavings. Shared by
// money-interleavings.test.ts (posts storage) and money-interleavings-hpos.test.ts (HPOS), each file its own shop.
//
// Each run draws one failed renewal (card or wallet, soft or hard decline) and a sequence of steps. A step is one to
// three commands started together (Promise.all): passes of two workers, staff's Charge now (double clicks), Stop
// dunning and the payment link, answers lost after the provider acted, 5xx and 429, refusals, a wallet cancel
// answered 202, the wallet taking due charges (its webhooks on time, doubled or never sent), new cards before and
// after WooCommerce's switch, the subscription moved to the other provider, and what else changes whether the
// renewal wants money: paid in the shop, the order cancelled or trashed (`trash`, `_wp_trash_meta_status`), the
// customer cancelling the subscription (`wc-cancelled`), each with the companion's signed notice half of the time,
// and the clock moved past the case's deadline. The clock also moves while requests are in flight.
//
// The network is slow at random: the next create, cancel or read at a provider is stalled, either before the
// provider acts on it or after it acted with its answer on its way; it is let through at a later step, so the
// caller's answer comes steps later (with the clock moved meanwhile), or never, when its worker "crashes".
//
// The two workers are processes of their own (test/support/paced-worker-process.ts), each the service's worker with
// its passes asked for and its clock set by the model, so that one pinned clock jumps by days for every process. A
// crash is SIGKILL: the process ends wherever it is (its transactions uncommitted, its connections cut by the system),
// its requests held at the providers are lost (one held before the provider never reaches it: the ledger row written,
// the request never made; one held after was acted on and its answer never arrives), and a new process (a spare
// started ahead, as PM2 restarts one) takes its place. A kill may also come a few milliseconds into a pass, at
// whatever point the pass has reached.
//
// After the steps, stalled requests are let through, whatever is in flight ends, faults end, and the workers settle
// (SETTLE_TICKS passes, the clock moved on between them, the wallet enacting the cancels it accepted). Then, per
// renewal, on what the provider fakes hold:
// - money was taken (a settled or authorized card charge, a CHARGED or RESERVED wallet charge of the service's) at
//   most once;
// - money taken at a moment the renewal no longer wanted it (src/payments/renewal-wants-money.ts, over the facts read
//   from the database before the provider acted: the order, its subscription, the dunning case, the subscription's
//   provider) is flagged: its payment carries the meta `second_capture_of`; except money that paid the order while it
//   was still unpaid, once, after the subscription moved to the other provider or staff stopped dunning: the ledger's
//   charge says why it was not wanted, and the operator is told (charge_taken_unwanted), without a refund flag;
// - every charge taken is recorded as a payment (CAPTURED or AUTHORIZED) by the end of the settling passes;
// - once the renewal no longer wants money, no charge of the ledger is still OPEN or CANCELING, and the wallet holds
//   no PENDING or DUE charge of the service's for it, by the end of the settling passes;
// - a subscription whose customer switched to a new card, or moved to the other provider, is not cancelled before
//   that method is charged.
//
// `npm test` (and so CI) runs a fixed set per storage mode: MONEY_RUNS runs (the file's default) from the seed
// 20261128. `npm run soak:money` runs more from a random seed: MONEY_RUNS of them, or for MONEY_SOAK_SECONDS. A
// failure prints the seed and the number of runs that replay it: MONEY_SEED=<seed> MONEY_RUNS=<runs> npx ava <the
// file> (each run starts where the one before left the shop and the clock, so a run is replayed with those before it).
// Steps run at once, and kills a few milliseconds into a pass, depend on real timing: a replay takes the same steps,
// but may meet the race at another point. MONEY_TRACE=1 prints each run's steps and the workers' log lines.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-interleavings';
const FIXED_SEED = 20261128;
const NOTICE_ROUTE = '/payment-hub/v1/shop/order-status-changed';
/** The key the companion signs its notices with (from the site's salts). */
const NOTICE_KEY = shopEventsKey(`${WP_SECRETS.loggedInKey}${WP_SECRETS.loggedInSalt}`);
/**
 * The settling passes after each run: the clock moved on by each, then a worker's pass. Reconciliation asks 1, 5, 15
 * and 60 minutes after a payment opened, then daily for a week, and the settle pass reads a charge still wanted back
 * every 6 hours from 6 days after it was sent: a take whose webhook was lost is recorded within a day, the bound.
 */
const SETTLE_TICKS = [3 * MINUTE, 3 * MINUTE, 3 * MINUTE, 3 * MINUTE, 20 * MINUTE, 20 * MINUTE, 61 * MINUTE, 24 * HOUR];
/** Money taken, as each provider holds it. */
const TAKEN_CARD = ['settled', 'authorized'];
const TAKEN_WALLET = ['CHARGED', 'RESERVED'];

type WorkerIndex = 0 | 1;
type StallTarget = 'create' | 'cancel' | 'read';

type Command =
  | { kind: 'tick'; worker: WorkerIndex }
  | { kind: 'advance'; ms: number }
  | { kind: 'charge_now'; clicks: 1 | 2 }
  | { kind: 'stop_dunning' }
  | { kind: 'payment_link' }
  | { kind: 'lose_next_create' }
  | { kind: 'provider_down'; status: 500 | 429 }
  | { kind: 'decline_next' }
  | { kind: 'cancel_202' }
  | { kind: 'enact_cancels' }
  | { kind: 'wallet_takes_due'; webhook: 'on_time' | 'doubled' | 'never' }
  | { kind: 'customer_fixes' }
  | { kind: 'new_card'; webhook: 'before_switch' | 'after_switch' | 'none' }
  | { kind: 'refuse_next' }
  | { kind: 'paid_in_shop'; notice: boolean }
  | { kind: 'order_cancelled'; notice: boolean }
  | { kind: 'switch_provider' }
  | { kind: 'stall_next'; target: StallTarget; when: 'before' | 'after' }
  | { kind: 'let_through' }
  | { kind: 'crash'; worker: WorkerIndex; afterMs: 0 | 3 | 15 | 40 }
  | { kind: 'customer_cancels'; notice: boolean }
  | { kind: 'order_trashed'; notice: boolean }
  | { kind: 'deadline' };

const worker = fc.constantFrom(0 as const, 1 as const);
const notice = fc.boolean();
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('tick' as const), worker }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(1000, 5 * MINUTE, 12 * HOUR, 3 * DAY) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('charge_now' as const), clicks: fc.constantFrom(1 as const, 2 as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stop_dunning' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'payment_link' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'lose_next_create' as const }) },
  // A 429 costs the service's own pauses before it gives up (1, 2 and 4 s): rarer than a 500.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('provider_down' as const), status: fc.constantFrom(500 as const, 500 as const, 500 as const, 429 as const) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'decline_next' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel_202' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'enact_cancels' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wallet_takes_due' as const), webhook: fc.constantFrom('on_time' as const, 'doubled' as const, 'never' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'customer_fixes' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('new_card' as const), webhook: fc.constantFrom('before_switch' as const, 'after_switch' as const, 'none' as const) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'refuse_next' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('paid_in_shop' as const), notice }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('order_cancelled' as const), notice }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'switch_provider' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('stall_next' as const), target: fc.constantFrom('create' as const, 'create' as const, 'cancel' as const, 'read' as const), when: fc.constantFrom('before' as const, 'after' as const) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'let_through' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('crash' as const), worker, afterMs: fc.constantFrom(0 as const, 3 as const, 15 as const, 40 as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('customer_cancels' as const), notice }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('order_trashed' as const), notice }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'deadline' as const }) },
);
/** A step: one command, or two or three started together. */
const step: fc.Arbitrary<Command[]> = fc.oneof(
  { weight: 3, arbitrary: command.map((one) => [one]) },
  { weight: 2, arbitrary: fc.array(command, { minLength: 2, maxLength: 3 }) },
);
interface Scenario { provider: Provider; decline: 'soft' | 'hard'; steps: Command[][] }
const scenario: fc.Arbitrary<Scenario> = fc.record({
  provider: fc.constantFrom('card_gateway' as const, 'mobile_wallet' as const),
  decline: fc.constantFrom('soft' as const, 'hard' as const),
  steps: fc.array(step, { minLength: 3, maxLength: 14 }),
});

/** What the rule reads, as the model reads it from the database: statuses without `wc-`. */
interface Facts { order: string | null; subscription: string | null; paymentMethod: string | null; dunningCase: string | null }
/** Facts read between `start` and `end` (real time, ms). */
interface Snapshot { start: number; end: number; facts: Facts }
/** Money a provider took, at a real time between `from` and `to`. */
interface Take { provider: Provider; id: string; from: number; to: number }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The model in one storage mode. `file` is the compiled test file's name (for the replay command). */
export function moneyInterleavings(file: string, storage: { hpos: boolean }, ciRuns: number): void {
  const RUNS = Number(process.env.MONEY_RUNS ?? ciRuns);
  const SOAK_SECONDS = Number(process.env.MONEY_SOAK_SECONDS ?? 0);
  const mode = storage.hpos ? 'HPOS' : 'posts storage';

  let shop: TestShop;
  let card: FakeCardGateway;
  let wallet: FakeMobileWallet;
  let hub: PaymentHub & { close(): Promise<void> };
  /** The two workers, each a process of its own; `spare` a third started ahead, to take a killed one's place at once. */
  const workers: PacedWorkerProcess[] = [];
  let spare: Promise<PacedWorkerProcess> | undefined;
  let staffApi: RunningStaffApi;
  let api: RunningApi;
  let manager: StaffUser;
  let now = new Date('2026-11-23T08:00:00Z');
  const clock = () => now;
  /** Moves the clock: the test's, and the one each worker process sees. */
  const setNow = (to: Date) => {
    now = to;
    for (const running of workers) running.setClock(to);
  };
  /** A new worker process, its clock the test's. */
  const workerProcess = () => startPacedWorkerProcess(shop.environment(environment()), now);
  let crashes = 0;
  let stepsAtOnce = 0;

  const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];

  function environment() {
    // Reconciliation on, as a shop runs it (RECONCILE_ENABLED defaults to true): a take whose webhook never came is
    // recorded by it, or by the settle pass's read-back, within the settling passes.
    return { ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV, ...providerEnvironment(card, wallet, { url: WALLET_WEBHOOK_URL, secret: WALLET_SECRET }), RECONCILE_ENABLED: 'true' };
  }
  const env = () => shop.config(environment());

  // -----------------------------------------------------------------------------------------------------------------
  // The shop as WooCommerce keeps it, in either storage mode.

  const p = () => shop.prefix;
  const gmt = () => now.toISOString().slice(0, 19).replace('T', ' ');

  /** Sets an order's (or subscription's) stored status (`wc-failed`, `trash`) where WooCommerce keeps it; only from `from` when given. */
  async function setStatus(id: number, stored: string, from?: string[]): Promise<boolean> {
    const only = from ? ` AND ${storage.hpos ? 'status' : 'post_status'} IN (?)` : '';
    const values = from ? [stored, gmt(), id, from] : [stored, gmt(), id];
    const result = storage.hpos
      ? await shop.db.query(`UPDATE ${p()}wc_orders SET status = ?, date_updated_gmt = ? WHERE id = ?${only}`, values)
      : await shop.db.query(`UPDATE ${p()}posts SET post_status = ?, post_modified_gmt = ? WHERE ID = ?${only}`, values);
    return (result[0] as { affectedRows: number }).affectedRows > 0;
  }

  async function storedStatus(id: number): Promise<string | null> {
    const rows = storage.hpos
      ? await q(`SELECT status FROM ${p()}wc_orders WHERE id = ?`, [id])
      : await q(`SELECT post_status AS status FROM ${p()}posts WHERE ID = ?`, [id]);
    return rows.length ? String(rows[0].status) : null;
  }

  /** Meta of an order or subscription as WooCommerce writes it, replacing what was there. */
  async function setMeta(id: number, meta: Record<string, string>) {
    const [table, idColumn] = storage.hpos ? [`${p()}wc_orders_meta`, 'order_id'] : [`${p()}postmeta`, 'post_id'];
    for (const [key, value] of Object.entries(meta)) {
      await q(`DELETE FROM ${table} WHERE ${idColumn} = ? AND meta_key = ?`, [id, key]);
      await q(`INSERT INTO ${table} (${idColumn}, meta_key, meta_value) VALUES (?, ?, ?)`, [id, key, value]);
    }
  }

  /** The subscription's payment method: HPOS keeps it in its column, posts storage in `_payment_method`. */
  async function setPaymentMethod(subscriptionId: number, gateway: string) {
    if (storage.hpos) await q(`UPDATE ${p()}wc_orders SET payment_method = ?, date_updated_gmt = ? WHERE id = ?`, [gateway, gmt(), subscriptionId]);
    else await setMeta(subscriptionId, { _payment_method: gateway });
  }

  async function paymentMethodOf(subscriptionId: number): Promise<string | null> {
    const rows = storage.hpos
      ? await q(`SELECT payment_method AS value FROM ${p()}wc_orders WHERE id = ?`, [subscriptionId])
      : await q(`SELECT meta_value AS value FROM ${p()}postmeta WHERE post_id = ? AND meta_key = '_payment_method'`, [subscriptionId]);
    return rows.length && rows[0].value !== null && rows[0].value !== '' ? String(rows[0].value) : null;
  }

  /** The rule's facts for the renewal, read from the database. */
  async function readFacts(renewal: { orderId: number; subscriptionId: number }): Promise<Facts> {
    const bare = (stored: string | null) => (stored === null ? null : stored.replace(/^wc-/, ''));
    const [order, subscription, paymentMethod, cases] = await Promise.all([
      storedStatus(renewal.orderId), storedStatus(renewal.subscriptionId), paymentMethodOf(renewal.subscriptionId),
      q(`SELECT status FROM ${p()}sidecar_dunning_cases WHERE order_id = ?`, [renewal.orderId]),
    ]);
    return { order: bare(order), subscription: bare(subscription), paymentMethod, dunningCase: cases.length ? String(cases[0].status) : null };
  }

  function wants(facts: Facts, provider: Provider) {
    return renewalWantsMoney({
      order: facts.order === null ? null : { status: facts.order },
      subscription: facts.subscription === null ? null : { status: facts.subscription, paymentMethod: facts.paymentMethod },
      dunningCase: facts.dunningCase === null ? null : { status: facts.dunningCase },
      provider,
    });
  }

  // -----------------------------------------------------------------------------------------------------------------

  test.before(async () => {
    shop = await createTestShop(storage.hpos ? 'money_interleavings_hpos' : 'money_interleavings', { hpos: storage.hpos });
    card = new FakeCardGateway();
    // The wallet's clock is the test's, plus the real time gone by: its limits a minute count real calls over real
    // minutes, as the service's own limiter does, while due dates follow the test's jumps.
    const startedAt = Date.now();
    wallet = new FakeMobileWallet({ now: () => new Date(now.getTime() + (Date.now() - startedAt)) });
    await Promise.all([card.start(), wallet.start()]);
    manager = await createStaffUser(shop, { login: 'ivar.interleave', displayName: 'Ivar Interleave', roles: ['shop_manager'] });
    hub = await openHub(env(), clock);
    await hub.registrations.add({ registrationId: 'reg-money', url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1', 'recurring.charge-canceled.v1'], secret: WALLET_SECRET });
    // Two worker processes' worth of workers, each with its own pool, as PM2 would run them.
    workers.push(...await Promise.all([workerProcess(), workerProcess()]));
    spare = workerProcess();
    staffApi = await startStaffApi(env(), { clock });
    // The whole API, for the companion's notices.
    api = await startApi(env(), undefined, clock);
    await announceCompanion(shop, true);
  });

  test.after.always(async () => {
    await staffApi?.stop();
    await api?.stop();
    await Promise.allSettled([...workers.map((running) => running.stop()), spare?.then((waiting) => waiting.stop())]);
    await hub?.close();
    await Promise.allSettled([card?.stop(), wallet?.stop()]);
    await shop?.drop();
  });

  let serial = 0;

  /** One failed renewal as WooCommerce leaves it (the order failed, the subscription on hold) and the service heard it. */
  async function failedRenewal(provider: Provider, decline: 'soft' | 'hard') {
    serial += 1;
    if (provider === 'card_gateway') {
      const customer = `cust-money-${serial}`;
      const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '149.00', billingPeriod: 'month', paymentMethod: 'reepay_checkout', paymentMethodTitle: 'Card', nextPaymentGmt: now, meta: { _reepay_token: `ca-money-${serial}` } });
      const orderId = await shop.seeder.createOrder({ status: 'pending', total: '149.00', currency: 'DKK', createdVia: 'subscription', paymentMethod: 'reepay_checkout', meta: { _subscription_renewal: String(subscriptionId) } });
      const [error, errorState] = decline === 'hard' ? ['credit_card_expired', 'hard_declined'] : ['insufficient_funds', 'soft_declined'];
      card.setCharge(`order-${orderId}`, { state: 'failed', amount: 14900, currency: 'DKK', customer, error, error_state: errorState });
      card.setPaymentMethod(`ca-money-${serial}`, { customer, state: decline === 'hard' ? 'failed' : 'active' });
      await processCardGatewayEvent(hub, { event_type: 'invoice_failed', invoice: `order-${orderId}` }, card.webhookSecret);
      await held(orderId, subscriptionId);
      return { orderId, subscriptionId, agreementId: null as string | null, customer };
    }
    const agreementId = `agr-money-${serial}`;
    const subscriptionId = await shop.seeder.createSubscription({ status: 'active', total: '99.00', paymentMethod: 'vipps_recurring', paymentMethodTitle: 'MobilePay', meta: { _agreement_id: agreementId } });
    const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', createdVia: 'subscription', paymentMethod: 'vipps_recurring', meta: { _subscription_renewal: String(subscriptionId), _charge_id: `chr-money-${serial}` } });
    wallet.setAgreement(agreementId);
    wallet.setCharge(agreementId, `chr-money-${serial}`, { status: 'FAILED' });
    await deliver({ eventType: 'recurring.charge-failed.v1', agreementId, chargeId: `chr-money-${serial}` });
    await held(orderId, subscriptionId);
    return { orderId, subscriptionId, agreementId, customer: null as string | null };
  }

  async function held(orderId: number, subscriptionId: number) {
    await setStatus(orderId, 'wc-failed');
    await setStatus(subscriptionId, 'wc-on-hold');
  }

  async function deliver(event: MobileWalletDeliveryEvent) {
    const delivery = mobileWalletDelivery(event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
    await hub.receiveMobileWalletWebhook.execute({ method: 'POST', headers: delivery.headers, body: delivery.body });
  }

  /** The companion's signed notice about the renewal order, as it sends it at the end of WooCommerce's request. */
  async function sendNotice(orderId: number, from: string, to: string) {
    const text = JSON.stringify({ order_id: orderId, from, to });
    const timestamp = Math.floor(now.getTime() / 1000);
    const answer = await request(api.url, 'POST', NOTICE_ROUTE, {
      headers: { 'content-type': 'application/json', 'x-shop-sidecar-timestamp': String(timestamp), 'x-shop-sidecar-signature': signHandOver(NOTICE_KEY, timestamp, text) },
      body: text,
    });
    // 401: the clock moved by more than the notice's 300 s while it was on its way (a notice lost: the pass finds it).
    if (answer.status !== 202 && answer.status !== 401) throw new Error(`the shop's notice answered ${answer.status}: ${answer.text}`);
  }

  /** The charges of the service's for the renewal, as the providers hold them: at either provider (a customer may switch). */
  function serviceCharges(renewal: { orderId: number }): { provider: Provider; id: string; agreement?: string; state: string; json: Record<string, unknown> | undefined }[] {
    const handles = new Set(card.requestsTo('POST', '/v1/charge').map((r) => String((r.json as { handle?: string } | null)?.handle)).filter((h) => h.startsWith(`order-${renewal.orderId}-retry`)));
    const onCard = [...handles].map((handle) => ({ provider: 'card_gateway' as const, id: handle, state: String(card.charge(handle)?.state ?? 'NONE'), json: card.charge(handle) }));
    // The wallet's orderId of an attempt carries its key, `retry-<order>-<attempt>` (walletRetryOrderId).
    const created = new Map<string, string>();
    for (const r of wallet.requests) {
      const agreement = r.method === 'POST' ? /^\/recurring\/v3\/agreements\/([^/]+)\/charges$/.exec(r.path)?.[1] : undefined;
      const id = String((r.json as { orderId?: string } | null)?.orderId ?? '');
      if (agreement && id.includes(`-retry-${renewal.orderId}-`)) created.set(id, agreement);
    }
    const onWallet = [...created].map(([id, agreement]) => ({ provider: 'mobile_wallet' as const, id, agreement, state: String(wallet.charge(agreement, id)?.status ?? 'NONE'), json: wallet.charge(agreement, id) }));
    return [...onCard, ...onWallet];
  }

  function stallMatcher(target: StallTarget): (method: string, path: string) => boolean {
    switch (target) {
      case 'create': return (method, path) => method === 'POST' && (path === '/v1/charge' || /^\/recurring\/v3\/agreements\/[^/]+\/charges$/.test(path));
      case 'cancel': return (method, path) => (method === 'POST' && /^\/v1\/charge\/[^/]+\/cancel$/.test(path)) || (method === 'DELETE' && /\/charges\/[^/]+$/.test(path));
      case 'read': return (method, path) => method === 'GET' && (path.startsWith('/v1/charge/') || /^\/recurring\/v3\/agreements\/[^/]+\/charges\/[^/?]+$/.test(path));
    }
  }

  async function run(input: Scenario): Promise<void> {
    card.clearFaults();
    wallet.clearFaults();
    card.clearStalls();
    wallet.clearStalls();
    wallet.enactAcceptedCancels();
    const renewal = await failedRenewal(input.provider, input.decline);
    const { orderId } = renewal;

    const snapshots: Snapshot[] = [];
    const snapshot = async () => {
      const start = Date.now();
      const facts = await readFacts(renewal);
      snapshots.push({ start, end: Date.now(), facts });
    };
    await snapshot();
    const walletTakes: Take[] = [];

    const session: { value: StaffSession | null } = { value: null };
    const asManager = async (path: string) => {
      session.value ??= await logIn(shop, manager, { nowSeconds: Math.floor(now.getTime() / 1000) });
      return request(staffApi.url, 'POST', `/payment-hub/v1/orders/${orderId}/${path}`, { headers: session.value.headers, body: {} });
    };
    const state = { ended: false, newCard: null as string | null, switchedTo: null as { provider: Provider; method: string } | null, movedWhileOpen: false };
    /** The wallet agreement charged now: the renewal's, or the one the customer switched to; null on the card. */
    const walletAgreement = () => (state.switchedTo ? (state.switchedTo.provider === 'mobile_wallet' ? state.switchedTo.method : null) : renewal.agreementId);

    /** What is in flight: every command started and not ended (a pass waiting on a stalled answer, a click...). */
    const inFlight = new Set<Promise<void>>();
    /** The pass each worker has in flight (a worker runs one pass at a time), and the passes of crashed workers. */
    const ticking: (Promise<void> | null)[] = [null, null];
    /** A new worker starting in a crashed one's place. */
    const starting: (Promise<void> | undefined)[] = [undefined, undefined];
    const crashed = new Set<PacedWorkerProcess>();
    const stopping = new Set<Promise<void>>();
    const failures: unknown[] = [];

    const trace = process.env.MONEY_TRACE === '1';
    if (trace) console.log(`run: renewal ${orderId} (${input.provider}, ${input.decline}, ${mode})`);

    const stallsMet = () => card.stallsMet + wallet.stallsMet;
    for (const group of input.steps) {
      if (trace) console.log(`  ${now.toISOString()} ${JSON.stringify(group)}`);
      if (group.length > 1) stepsAtOnce += 1;
      const stalledBefore = stallsMet();
      const started = group.map((one) => {
        const promise: Promise<void> = perform(one).catch((error: unknown) => { failures.push(error); });
        const tracked = promise.finally(() => inFlight.delete(tracked));
        inFlight.add(tracked);
        return tracked;
      });
      // The step ends when its commands have, or once one of them waits on a request the network stalled: that one
      // goes on in the background, its answer steps later.
      let stalledNow = false;
      const watch = (async () => {
        while (!stalledNow) {
          if (stallsMet() > stalledBefore) return;
          await sleep(5);
        }
      })();
      await Promise.race([Promise.all(started), watch]);
      stalledNow = true;
      if (failures.length) throw failures[0];
      await snapshot();
    }

    async function perform(one: Command): Promise<void> {
      switch (one.kind) {
        case 'tick': {
          const index = one.worker;
          if (ticking[index]) return; // its pass is still running (waiting on a stalled answer)
          let running: PacedWorkerProcess | undefined;
          const pass: Promise<void> = (async () => {
            await starting[index];
            running = workers[index]!;
            await running.tick();
          })();
          ticking[index] = pass;
          try {
            await pass;
          } catch (error) {
            // A killed worker's pass ends with its process.
            if (!running || !crashed.has(running)) throw error;
          } finally {
            if (ticking[index] === pass) ticking[index] = null;
          }
          return;
        }
        case 'advance':
          setNow(new Date(now.getTime() + one.ms));
          session.value = null;
          return;
        case 'charge_now': {
          const answers = await Promise.all(Array.from({ length: one.clicks }, () => asManager('charge-now')));
          for (const answer of answers) if (answer.status >= 500) throw new Error(`charge now answered ${answer.status}: ${answer.text}`);
          return;
        }
        case 'stop_dunning': {
          const answer = await asManager('stop-dunning');
          if (answer.status >= 500) throw new Error(`stop dunning answered ${answer.status}: ${answer.text}`);
          if (answer.status === 200) state.ended = true;
          await snapshot();
          return;
        }
        case 'payment_link': {
          const answer = await asManager('payment-link');
          if (answer.status >= 500) throw new Error(`payment link answered ${answer.status}: ${answer.text}`);
          return;
        }
        case 'lose_next_create':
          if (renewal.agreementId) wallet.loseAnswers((method, path) => method === 'POST' && path.endsWith(`/agreements/${renewal.agreementId}/charges`));
          else card.loseAnswers((method, path) => method === 'POST' && path === '/v1/charge');
          return;
        case 'provider_down':
          if (walletAgreement()) wallet.queueChargeOutcome({ kind: 'http', status: one.status });
          else card.queueChargeOutcome({ kind: 'http', status: one.status });
          return;
        case 'decline_next':
          if (walletAgreement()) wallet.setAgreementCard(walletAgreement()!, 'no_funds');
          else card.queueChargeOutcome({ kind: 'failed', error: 'insufficient_funds', errorState: 'soft_declined' });
          return;
        case 'customer_fixes':
          if (walletAgreement()) wallet.setAgreementCard(walletAgreement()!, 'good');
          return;
        case 'new_card': {
          if (!renewal.customer || state.switchedTo) return;
          const newCard = `ca-money-new-${serial}-${Math.round(Math.random() * 1e6)}`;
          state.newCard = newCard;
          card.setPaymentMethod(newCard, { customer: renewal.customer, state: 'active' });
          const told = () => processCardGatewayEvent(hub, { event_type: 'customer_payment_method_added', customer: renewal.customer!, payment_method: newCard }, card.webhookSecret);
          if (one.webhook === 'before_switch') await told();
          await setMeta(renewal.subscriptionId, { _reepay_token: newCard });
          // Only a switch the case was still open for must be charged before the deadline cancels (not one after).
          if ((await readFacts(renewal)).dunningCase !== 'OPEN') state.newCard = null;
          if (one.webhook === 'after_switch') await told();
          return;
        }
        case 'refuse_next':
          if (walletAgreement()) wallet.queueChargeOutcome({ kind: 'http', status: 400, problem: 'validation-error', detail: 'Input validation failed' });
          else card.queueChargeOutcome({ kind: 'http', status: 400, code: 12, error: 'invalid_request' });
          return;
        case 'cancel_202':
          wallet.acceptNextCancels(1);
          return;
        case 'enact_cancels':
          wallet.enactAcceptedCancels();
          return;
        case 'wallet_takes_due': {
          const before = new Map(serviceCharges(renewal).filter((c) => c.provider === 'mobile_wallet').map((c) => [c.id, c.state]));
          const from = Date.now();
          const emitted = await wallet.runDueCharges(now);
          const to = Date.now();
          for (const charge of serviceCharges(renewal)) {
            if (charge.provider === 'mobile_wallet' && TAKEN_WALLET.includes(charge.state) && !TAKEN_WALLET.includes(before.get(charge.id) ?? 'NONE')) {
              walletTakes.push({ provider: 'mobile_wallet', id: charge.id, from, to });
            }
          }
          for (const event of emitted) {
            if (one.webhook === 'never') continue;
            const times = one.webhook === 'doubled' ? 2 : 1;
            for (let i = 0; i < times; i += 1) await deliver(event.event);
          }
          return;
        }
        case 'paid_in_shop':
          if (await setStatus(orderId, 'wc-processing', ['wc-failed', 'wc-pending'])) {
            state.ended = true;
            await snapshot();
            if (one.notice) await sendNotice(orderId, 'failed', 'processing');
          }
          return;
        case 'order_cancelled':
          if (await setStatus(orderId, 'wc-cancelled', ['wc-failed', 'wc-pending'])) {
            state.ended = true;
            await snapshot();
            if (one.notice) await sendNotice(orderId, 'failed', 'cancelled');
          }
          return;
        case 'order_trashed': {
          // wp_trash_post() / WC_Order::delete(false): the status `trash`, the one it had kept in `_wp_trash_meta_status`.
          const was = await storedStatus(orderId);
          if (was === null || was === 'trash') return;
          await setMeta(orderId, { _wp_trash_meta_status: was, _wp_trash_meta_time: String(Math.floor(now.getTime() / 1000)) });
          await setStatus(orderId, 'trash');
          state.ended = true;
          await snapshot();
          if (one.notice) await sendNotice(orderId, was.replace(/^wc-/, ''), 'trash');
          return;
        }
        case 'customer_cancels': {
          // My Account's Cancel: WooCommerce Subscriptions moves the subscription to cancelled (`wc-cancelled`) and
          // ends its schedule; the renewal order stays as it was.
          const was = await storedStatus(renewal.subscriptionId);
          if (!(await setStatus(renewal.subscriptionId, 'wc-cancelled', ['wc-on-hold', 'wc-active', 'wc-pending']))) return;
          await setMeta(renewal.subscriptionId, { _schedule_cancelled: gmt(), _schedule_end: gmt(), _schedule_next_payment: '0' });
          state.ended = true;
          await snapshot();
          if (one.notice) await sendNotice(orderId, `subscription:${String(was).replace(/^wc-/, '')}`, 'subscription:cancelled');
          return;
        }
        case 'deadline': {
          const [found] = await q(`SELECT status, deadline_at FROM ${p()}sidecar_dunning_cases WHERE order_id = ?`, [orderId]);
          if (!found || found.status !== 'OPEN' || !found.deadline_at) return;
          const deadline = new Date(`${String(found.deadline_at).replace(' ', 'T')}Z`);
          if (Number.isNaN(deadline.getTime()) || deadline.getTime() < now.getTime()) return;
          setNow(new Date(deadline.getTime() + MINUTE));
          session.value = null;
          return;
        }
        case 'switch_provider': {
          // WooCommerce's change of the subscription's payment method to the other provider's gateway, with the
          // method that provider's plugin saved (the card plugin's `_reepay_token`, the wallet plugin's `_agreement_id`).
          if (state.switchedTo) return;
          if (renewal.agreementId) {
            const token = `ca-money-switch-${serial}`;
            card.setPaymentMethod(token, { customer: `cust-money-switch-${serial}`, state: 'active' });
            await setMeta(renewal.subscriptionId, { _reepay_token: token });
            await setPaymentMethod(renewal.subscriptionId, 'reepay_checkout');
            state.switchedTo = { provider: 'card_gateway', method: token };
          } else {
            const agreement = `agr-money-switch-${serial}`;
            wallet.setAgreement(agreement);
            await setMeta(renewal.subscriptionId, { _agreement_id: agreement });
            await setPaymentMethod(renewal.subscriptionId, 'vipps_recurring');
            state.switchedTo = { provider: 'mobile_wallet', method: agreement };
          }
          // A new card saved earlier is no longer what the subscription pays with: the move is what must be charged now.
          state.newCard = null;
          await snapshot();
          // Only a move the case was still open for must be charged before the deadline cancels (not one after).
          state.movedWhileOpen = snapshots[snapshots.length - 1]!.facts.dunningCase === 'OPEN';
          return;
        }
        case 'stall_next':
          (input.provider === 'card_gateway' && !state.switchedTo ? card : walletAgreement() ? wallet : card).stallRequests(stallMatcher(one.target), one.when);
          return;
        case 'let_through': {
          const oldest = [...card.stalledRequests.map((r) => ({ fake: card as FakeCardGateway | FakeMobileWallet, r })), ...wallet.stalledRequests.map((r) => ({ fake: wallet as FakeCardGateway | FakeMobileWallet, r }))][0];
          oldest?.fake.letThroughStalled(oldest.r);
          return;
        }
        case 'crash': {
          await sleep(one.afterMs);
          const index = one.worker;
          await starting[index];
          const victim = workers[index]!;
          crashes += 1;
          crashed.add(victim);
          // SIGKILL: the process ends where it is, its transactions uncommitted, its connections cut by the system.
          const killed = victim.kill();
          if (ticking[index]) {
            // Requests held on their way to a provider die with it, dropped before their connections' close is heard:
            // one held before the provider never reaches it (the ledger row written, the request never made), one
            // held after was acted on and its answer is lost (another caller's held request only hears a reset).
            card.dropStalled();
            wallet.dropStalled();
          }
          ticking[index] = null;
          stopping.add(killed);
          // PM2 starts a new one (the spare, started ahead); a pass asked of this worker meanwhile waits for it.
          const replacement = spare ?? workerProcess();
          spare = undefined;
          starting[index] = replacement.then((next) => {
            next.setClock(now);
            workers[index] = next;
            spare = workerProcess();
          });
          await starting[index];
          return;
        }
      }
    }

    // The run's faults end: stalled requests go on, whatever was in flight ends, and the workers settle what is
    // open for a few passes, minutes apart, the wallet enacting the cancels it accepted meanwhile ("will likely succeed").
    card.clearFaults();
    wallet.clearFaults();
    card.clearStalls();
    wallet.clearStalls();
    while (inFlight.size) {
      card.letThroughStalled();
      wallet.letThroughStalled();
      await Promise.race([Promise.all([...inFlight]), sleep(20)]);
    }
    await Promise.all([...starting, ...stopping]);
    if (failures.length) throw failures[0];
    await snapshot();
    for (const [i, ms] of SETTLE_TICKS.entries()) {
      wallet.enactAcceptedCancels();
      setNow(new Date(now.getTime() + ms));
      await workers[i % 2]!.tick();
    }
    await snapshot();
    await check(renewal, state, snapshots, walletTakes);

    // The renewal is done with: staff stop its dunning and WooCommerce cancels it, so that the next runs' passes
    // do not carry it (each pass looks at every open case and charge).
    const stopped = await asManager('stop-dunning');
    if (stopped.status >= 500) throw new Error(`stop dunning answered ${stopped.status}: ${stopped.text}`);
    for (const id of [orderId, renewal.subscriptionId]) if ((await storedStatus(id)) !== 'trash') await setStatus(id, 'wc-cancelled');
  }

  /** The invariants, per renewal, on what the provider fakes hold. */
  async function check(
    renewal: { orderId: number; subscriptionId: number },
    state: { ended: boolean; newCard: string | null; switchedTo: { provider: Provider; method: string } | null; movedWhileOpen: boolean },
    snapshots: Snapshot[],
    walletTakes: Take[],
  ): Promise<void> {
    const { orderId } = renewal;
    const charges = serviceCharges(renewal);
    const ledger = async () => q(`SELECT external_id, provider, requested_by, state, cancel_reason, result, payment_id, in_flight_until,
      in_flight_until IS NOT NULL AND in_flight_until >= UTC_TIMESTAMP(3) AS may_still_arrive FROM ${p()}sidecar_charges WHERE order_id = ? ORDER BY id`, [orderId]);
    const story = async () => `\n  at the providers: ${JSON.stringify(charges.map(({ provider, id, state: s }) => ({ provider, id, state: s })))}`
      + `\n  requests about them: ${JSON.stringify([...card.requests, ...wallet.requests].filter((r) => charges.some((c) => r.path.includes(c.id) || r.body.includes(c.id))).map((r) => `${r.method} ${r.path}`))}`
      + `\n  the ledger: ${JSON.stringify(await ledger())}\n  facts over time: ${JSON.stringify(snapshots.map((s) => s.facts).filter((f, i, all) => i === 0 || JSON.stringify(f) !== JSON.stringify(all[i - 1])))}`;

    // Money taken, and when: the card gateway stamps a charge as it settles or authorizes it; the wallet's takes were
    // timed around the run of its due charges.
    const takes: Take[] = [];
    for (const charge of charges) {
      if (charge.provider !== 'card_gateway' || !TAKEN_CARD.includes(charge.state)) continue;
      const at = Date.parse(String(charge.json?.settled ?? charge.json?.authorized ?? charge.json?.created));
      takes.push({ provider: 'card_gateway', id: charge.id, from: at, to: at });
    }
    for (const charge of charges) {
      if (charge.provider !== 'mobile_wallet' || !TAKEN_WALLET.includes(charge.state)) continue;
      takes.push(walletTakes.find((take) => take.id === charge.id) ?? { provider: 'mobile_wallet', id: charge.id, from: 0, to: 0 });
    }

    // At most once.
    if (takes.length > 1) throw new Error(`renewal ${orderId}: ${takes.length} charges of the service's took money${await story()}`);

    for (const take of takes) {
      const payments = await q(`SELECT p.id, p.status, m.meta_value AS flag FROM ${p()}sidecar_payments p
        LEFT JOIN ${p()}sidecar_payment_meta m ON m.payment_id = p.id AND m.meta_key = 'second_capture_of'
        WHERE p.provider = ? AND p.external_id = ?`, [take.provider, take.id]);
      // Recorded within the settling passes.
      const recorded = payments.find((payment) => ['CAPTURED', 'AUTHORIZED'].includes(String(payment.status)));
      if (!recorded) throw new Error(`renewal ${orderId}: ${take.provider} took ${take.id}, not recorded as a payment after the settling passes: ${JSON.stringify(payments)}${await story()}`);
      // Only while the renewal wanted it, or flagged: the facts read last before the provider acted.
      const before = [...snapshots].reverse().find((s) => s.end < take.from);
      const wanted = before ? wants(before.facts, take.provider) : { wants: true as const };
      // A take the rule would not have made but that paid an order still unpaid, once (the subscription had moved to the
      // other provider, staff had stopped dunning): recorded, the ledger's charge saying why, the operator told
      // (charge_taken_unwanted, a warning), not flagged for a refund. Anything else is flagged.
      const [ledgerRow] = await q(`SELECT cancel_reason FROM ${p()}sidecar_charges WHERE provider = ? AND external_id = ?`, [take.provider, take.id]);
      const paidUnpaidOrder = !wanted.wants && !takenForNobody(wanted.reason) && ledgerRow?.cancel_reason != null && !takenForNobody(String(ledgerRow.cancel_reason));
      if (!wanted.wants && recorded.flag === null && !paidUnpaidOrder) {
        throw new Error(`renewal ${orderId}: ${take.provider} took ${take.id} when the renewal no longer wanted it (${wanted.reason}: ${JSON.stringify(before!.facts)}), not flagged second_capture_of${await story()}`);
      }
    }

    // Once the renewal wants no money, nothing of the service's is left open for it: in the ledger, or at the wallet.
    const last = snapshots[snapshots.length - 1]!.facts;
    for (const provider of ['card_gateway', 'mobile_wallet'] as const) {
      const wanted = wants(last, provider);
      if (wanted.wants) continue;
      // Except a charge whose last request may still reach the provider by the database's clock (in_flight_until: its
      // sender died before the request left, or while it was on its way): closing it as never made before then is the
      // late second charge of issue 49. That bound is real time (90 s), which the settling passes, milliseconds apart
      // in real time, do not wait out; the provider must not hold it as still to be taken meanwhile (checked below).
      const open = (await ledger()).filter((row) => row.provider === provider && ['OPEN', 'CANCELING'].includes(String(row.state))
        && !(Number(row.may_still_arrive) === 1 && !charges.some((charge) => charge.id === row.external_id && charge.state !== 'NONE')));
      if (open.length) throw new Error(`renewal ${orderId}: no longer wanted (${wanted.reason}), yet the ledger holds an open charge after the settling passes${await story()}`);
      const due = charges.filter((charge) => charge.provider === provider && ['PENDING', 'DUE'].includes(charge.state));
      if (due.length) throw new Error(`renewal ${orderId}: no longer wanted (${wanted.reason}), yet the wallet still holds the service's charge after the settling passes${await story()}`);
    }

    // The customer who acted is not lost: a new active card the subscription was switched to, in a renewal not ended
    // otherwise, is charged before any cancellation.
    if (state.newCard && !state.ended) {
      const cancelled = await q(`SELECT id FROM ${p()}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'subscription_cancel_after_dunning'`, [renewal.subscriptionId]);
      const chargedOnIt = card.requestsTo('POST', '/v1/charge').some((r) => (r.json as { source?: string } | null)?.source === state.newCard);
      if (cancelled.length && !chargedOnIt) throw new Error(`renewal ${orderId}: subscription cancelled though the customer switched to ${state.newCard}, never charged${await story()}`);
    }
    // The customer who moved the subscription to the other provider is not lost either: charged there first.
    const switchedTo = state.switchedTo;
    if (switchedTo && state.movedWhileOpen && !state.ended) {
      const cancelled = await q(`SELECT id FROM ${p()}sidecar_woocommerce_changes WHERE object_id = ? AND op = 'subscription_cancel_after_dunning'`, [renewal.subscriptionId]);
      const chargedThere = switchedTo.provider === 'card_gateway'
        ? card.requestsTo('POST', '/v1/charge').some((r) => (r.json as { source?: string } | null)?.source === switchedTo.method)
        : wallet.requests.some((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${switchedTo.method}/charges`);
      if (cancelled.length && !chargedThere) throw new Error(`renewal ${orderId}: subscription cancelled though the customer moved to ${switchedTo.provider} (${switchedTo.method}), never charged there${await story()}`);
    }
  }

  test.serial(`One renewal, one payment, money only while it is wanted (${mode}): ${SOAK_SECONDS ? `${SOAK_SECONDS} s of` : RUNS} randomised interleavings of workers that crash, steps at once, stalled answers, staff, customers, the shop and provider faults`, async (t) => {
    t.timeout(SOAK_SECONDS ? (SOAK_SECONDS + 600) * 1000 : Math.max(30 * 60_000, RUNS * 3000));
    // A fixed set unless asked for another: the same runs in every CI run.
    const asked = process.env.MONEY_SEED ?? String(FIXED_SEED);
    const seed = asked === 'random' ? Date.now() % 2_147_483_647 : Number(asked);
    const started = Date.now();
    const parameters: fc.Parameters<[Scenario]> = {
      seed, numRuns: SOAK_SECONDS ? Number.MAX_SAFE_INTEGER : RUNS, endOnFailure: true,
      ...(SOAK_SECONDS ? { interruptAfterTimeLimit: SOAK_SECONDS * 1000, markInterruptAsFailure: false } : {}),
      ...(process.env.MONEY_PATH ? { path: process.env.MONEY_PATH } : {}),
    };
    const runOnce = async (input: Scenario) => {
      try {
        await run(input);
      } finally {
        // A run that failed leaves nothing stalled behind it.
        for (const fake of [card, wallet]) {
          fake.clearStalls();
          fake.letThroughStalled();
        }
      }
    };
    const details = await fc.check(fc.asyncProperty(scenario, runOnce), parameters);
    t.log(`${details.numRuns} runs in ${Math.round((Date.now() - started) / 1000)} s (seed ${seed}, ${mode}): ${stepsAtOnce} steps of commands at once, ${crashes} worker crashes`);
    if (details.failed) {
      t.fail(`failed after ${details.numRuns} runs: ${String((details.errorInstance as Error | undefined)?.stack ?? details.errorInstance ?? '')}\n`
        + `counterexample: ${JSON.stringify(details.counterexample)}\n`
        + `replay (the runs before it shape the shop and the clock): npm run build && MONEY_SEED=${seed} MONEY_RUNS=${details.numRuns} npx ava dist/test/payments/${file}`);
    } else {
      t.pass();
    }
  });
}
