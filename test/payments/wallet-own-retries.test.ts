import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, RAISED_LIMITS_ENV } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent, type MobileWalletEmitted } from '../support/fake-mobile-wallet';
import { request } from '../support/http-client';
import { announceCompanion, handleWalletEvent, openHub, startPacedWorker } from '../support/payment-hub-fixture';
import { providerEnvironment } from '../support/provider-environment';
import { startStaffApi, type RunningStaffApi } from '../support/staff-api';
import { failedWalletRenewal as failedWalletRenewalOf } from '../support/failed-renewals';
import { createTestShop, type TestShop } from '../support/test-shop';
import { createStaffUser, logIn, WP_SECRETS_ENV, type StaffSession, type StaffUser } from '../support/wordpress-fixtures';

// The wallet's own retries (issue 45), through the worker (as main.ts starts it, ticked under a pinned clock) against
// the strict loopback wallet: the service's attempt on a wallet renewal is ONE charge with retryDays, which the wallet
// retries itself daily (its "Charge retries": DUE until CHARGED or FAILED), and the service asks for nothing more of
// its own meanwhile ("Do not build your own retry loop for RECURRING charges", vippsas/agent-toolkit recurring/SKILL.md).
// Followed to CHARGED (the renewal paid, the case recovered) and to FAILED (the customer asked: the policy's next step).

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-own-retries';

let shop: TestShop;
let card: FakeCardGateway;
let wallet: FakeMobileWallet;
let hub: PaymentHub & { close(): Promise<void> };
let worker: RunningWorker;
let api: RunningStaffApi;
let session: StaffSession;
let manager: StaffUser;
let now = new Date('2026-11-23T08:00:00Z');
const clock = () => now;
async function tickAfter(ms: number) {
  now = new Date(now.getTime() + ms);
  await worker.tick();
}

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];
const chargesOf = async (orderId: number) => q(`SELECT external_id, state, due, retry_days, sends FROM ${shop.prefix}sidecar_charges WHERE order_id = ? ORDER BY id`, [orderId]);
const retriesOf = async (orderId: number) => q(`SELECT attempt, plan, status FROM ${shop.prefix}sidecar_payment_retries WHERE order_id = ? ORDER BY id`, [orderId]);
const caseOf = async (orderId: number) => (await q(`SELECT status, policy, customer_asked_at, deadline_at, recovered_by FROM ${shop.prefix}sidecar_dunning_cases WHERE order_id = ?`, [orderId]))[0];
/** The wallet charges the service asked for on one agreement (POST …/charges). */
const walletCreates = (agreementId: string) => wallet.requests.filter((r) => r.method === 'POST' && r.path === `/recurring/v3/agreements/${agreementId}/charges`);

function env() {
  return shop.config({ ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV, ...providerEnvironment(card, wallet, { url: WALLET_WEBHOOK_URL, secret: WALLET_SECRET }) });
}
const walletWebhook = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
/** What the wallet sent by itself, delivered to the service as its webhook would be. */
async function deliver(emitted: MobileWalletEmitted[]) {
  for (const { event } of emitted) await walletWebhook(event);
}
async function story(orderId: number) {
  session = await logIn(shop, manager, { nowSeconds: Math.floor(now.getTime() / 1000) });
  const res = await request(api.url, 'GET', `/payment-hub/v1/orders/${orderId}/payments`, { headers: session.headers });
  if (res.status !== 200) throw new Error(res.text);
  return res.json.dunning;
}

/** A wallet renewal whose own charge (tried once) failed, the customer's card empty: the service's attempt is planned 12 h later. */
const failedWalletRenewal = () => failedWalletRenewalOf({ shop, wallet, deliver: walletWebhook }, 'own-retries', { noFunds: true });

/** The service's attempt falls due: one wallet charge with retryDays, due two days ahead. */
async function attemptMade(orderId: number, agreementId: string) {
  await tickAfter(12 * HOUR);
  const creates = walletCreates(agreementId);
  if (creates.length !== 1) throw new Error(`expected one wallet charge, got ${creates.length}`);
  const [charge] = await chargesOf(orderId);
  return { body: creates[0]!.json as Record<string, unknown>, charge };
}

test.before(async () => {
  shop = await createTestShop('wallet_own_retries', { hpos: false });
  card = new FakeCardGateway();
  wallet = new FakeMobileWallet({ now: clock });
  await Promise.all([card.start(), wallet.start()]);
  manager = await createStaffUser(shop, { login: 'willy.wallet', displayName: 'Willy Wallet', roles: ['shop_manager'] });
  hub = await openHub(env(), clock);
  await hub.registrations.add({ registrationId: 'reg-own-retries', url: WALLET_WEBHOOK_URL, events: ['recurring.charge-failed.v1', 'recurring.charge-captured.v1', 'recurring.charge-canceled.v1'], secret: WALLET_SECRET });
  worker = await startPacedWorker(env(), clock);
  api = await startStaffApi(env(), { clock });
  await announceCompanion(shop, true);
});

test.after.always(async () => {
  await api?.stop();
  await worker?.stop();
  await hub?.close();
  await Promise.allSettled([card?.stop(), wallet?.stop()]);
  await shop?.drop();
});

test.serial('A wallet retry charge with retryDays, taken on the wallet\'s fourth day of retries: the renewal is paid and the case recovered, with no charge of the service\'s own meanwhile', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  const { body, charge } = await attemptMade(orderId, agreementId);
  // An attempt of the plan asks for the wallet's whole window: due 2026-11-25, 14 days of retries, final after
  // 00:00 UTC on 2026-12-10.
  t.like(body, { type: 'RECURRING', processingMode: 'MULTIPLE_ATTEMPTS', retryDays: 14, due: '2026-11-25' });
  t.like(charge, { state: 'OPEN', retry_days: 14, due: '2026-11-25', sends: 1 });

  // The wallet's due date and three days of its retries pass, the card still empty: DUE, and the service only waits.
  for (const day of ['2026-11-25T16:00:00Z', '2026-11-26T16:00:00Z', '2026-11-27T16:00:00Z']) {
    const at = new Date(day);
    while (now.getTime() < at.getTime()) await tickAfter(6 * HOUR);
    await deliver(await wallet.advanceTo(now));
    await tickAfter(MINUTE);
    t.is(wallet.charge(agreementId, charge.external_id)?.status, 'DUE', `still DUE on ${day}`);
  }
  t.is(walletCreates(agreementId).length, 1, 'no charge of the service\'s own while the wallet retries');
  t.like((await chargesOf(orderId))[0], { state: 'OPEN' }, 'the renewal\'s one open charge');
  t.false((await retriesOf(orderId)).some((retry) => ['PENDING', 'PROCESSING'].includes(retry.status)), 'no attempt planned');
  const retrying = await story(orderId);
  t.like(retrying.next, { event: 'wallet_retrying' });
  t.is(Date.parse(retrying.next.until), Date.parse('2026-12-10T00:00:00Z'), 'final after 00:00 UTC the day after the last retry day');

  // The customer fills the card in the app: the wallet's next try takes it.
  wallet.setAgreementCard(agreementId, 'good');
  now = new Date('2026-11-28T08:00:00Z');
  const emitted = await wallet.advanceTo(now);
  t.is(wallet.charge(agreementId, charge.external_id)?.status, 'CHARGED');
  await deliver(emitted);
  await tickAfter(MINUTE);
  t.like((await chargesOf(orderId))[0], { state: 'TAKEN' });
  t.like(await caseOf(orderId), { status: 'RECOVERED', recovered_by: 'service_retry' });
  t.is(walletCreates(agreementId).length, 1, 'one charge in all');
});

test.serial('A wallet retry charge the wallet FAILS after its retry days: the customer is asked (the policy\'s next step), not another charge on the same agreement', async (t) => {
  const { orderId, agreementId } = await failedWalletRenewal();
  const { body, charge } = await attemptMade(orderId, agreementId);
  const retryDays = body.retryDays as number;
  t.true(retryDays >= 2 && retryDays <= 14);

  // Every try of the wallet's fails; the service ticks along each day and charges nothing of its own.
  const final = new Date(Date.parse(`${charge.due}T00:00:00Z`) + (retryDays + 1) * DAY);
  let emitted: MobileWalletEmitted[] = [];
  while (now.getTime() < final.getTime()) {
    await tickAfter(6 * HOUR);
    emitted = emitted.concat(await wallet.advanceTo(now));
    if (wallet.charge(agreementId, charge.external_id)?.status === 'DUE') t.is(walletCreates(agreementId).length, 1);
  }
  const read = wallet.charge(agreementId, charge.external_id)!;
  t.like(read, { status: 'FAILED', failureReason: 'user_action_required', retryDays });
  t.is(emitted.length, 1, 'one event: the end');
  await deliver(emitted);
  await tickAfter(MINUTE);

  t.like((await chargesOf(orderId))[0], { state: 'DECLINED' });
  const found = await caseOf(orderId);
  t.like(found, { status: 'OPEN', policy: 'ask_customer' });
  t.truthy(found.customer_asked_at, 'the customer is asked for a new payment method');
  t.truthy(found.deadline_at);
  t.false((await retriesOf(orderId)).some((retry) => retry.status === 'PENDING'), 'no attempt on the same agreement for the same reason');
  const told = await story(orderId);
  t.like(told.next, { event: 'deadline' });
  const failed = told.timeline.filter((entry: { event: string }) => entry.event === 'attempt_failed').pop();
  t.like(failed, { attempt: 1, reason: 'user_action_required', state: 'wallet_retried' });

  // Days later, the deadline near: still nothing of the service's own on the agreement.
  for (let i = 0; i < 8; i += 1) await tickAfter(12 * HOUR);
  t.is(walletCreates(agreementId).length, 1, 'one charge in all');
});
