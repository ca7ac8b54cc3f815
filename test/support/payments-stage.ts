import test from 'ava';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';
import type { RunningWorker } from '../../src/entry-points/worker/worker';
import { FakeCardGateway, RAISED_LIMITS_ENV, type CardGatewayDeliveryEvent } from './fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from './fake-mobile-wallet';
import { request, type TestResponse } from './http-client';
import { announceCompanion, handleWalletEvent, openHub, processCardGatewayEvent, startPacedWorker } from './payment-hub-fixture';
import { providerEnvironment } from './provider-environment';
import { startStaffApi, type RunningStaffApi } from './staff-api';
import { createTestShop, type TestShop } from './test-shop';
import { createStaffUser, logIn, WP_SECRETS_ENV, type StaffSession, type StaffUser } from './wordpress-fixtures';

const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';

/**
 * One test file's payments stage: its own shop (posts storage) with the companion, the strict loopback card gateway
 * and wallet (the wallet on the stage's clock), the payment hub, one worker ticked under that pinned clock, the staff
 * routes and a logged-in shop manager (logged in again before each test). Registers the file's before, beforeEach
 * and after hooks; the fields are there once `test.before` has run.
 */
export interface PaymentsStage {
  shop: TestShop;
  card: FakeCardGateway;
  wallet: FakeMobileWallet;
  hub: PaymentHub & { close(): Promise<void> };
  worker: RunningWorker;
  api: RunningStaffApi;
  manager: StaffUser;
  session: StaffSession;
  /** The pinned time every part of the stage sees. */
  now: Date;
  clock(): Date;
  advance(ms: number): void;
  /** The clock moved by `ms`, then one pass of the worker. */
  tickAfter(ms: number): Promise<void>;
  /** Rows of a statement on the shop's database. */
  q(sql: string, values?: unknown[]): Promise<any[]>;
  walletWebhook(event: MobileWalletDeliveryEvent): Promise<string>;
  cardWebhook(event: CardGatewayDeliveryEvent): Promise<string>;
  /** A staff route, as the logged-in shop manager. */
  asManager(method: string, path: string): Promise<TestResponse>;
  /** The service's configuration for the stage, with overrides as environment variables. */
  env(extra?: Record<string, string>): ReturnType<TestShop['config']>;
}

export function paymentsStage(name: string, options: { start: Date; manager: { login: string; displayName: string }; walletEvents?: string[] }): PaymentsStage {
  const walletSecret = `wallet-secret-${name}`;
  const stage = {
    now: options.start,
    clock: () => stage.now,
    advance(ms: number) { stage.now = new Date(stage.now.getTime() + ms); },
    async tickAfter(ms: number) {
      stage.advance(ms);
      await stage.worker.tick();
    },
    q: async (sql: string, values: unknown[] = []) => (await stage.shop.db.query(sql, values))[0] as any[],
    walletWebhook: (event: MobileWalletDeliveryEvent) => handleWalletEvent(stage.hub, event, { secret: walletSecret, url: WALLET_WEBHOOK_URL }),
    cardWebhook: (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(stage.hub, event, stage.card.webhookSecret),
    asManager: (method: string, path: string) => request(stage.api.url, method, path, { headers: stage.session.headers, body: {} }),
  } as PaymentsStage;
  const env = (extra: Record<string, string> = {}) => stage.shop.config({
    ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV, ...providerEnvironment(stage.card, stage.wallet, { url: WALLET_WEBHOOK_URL, secret: walletSecret }), ...extra,
  });
  stage.env = env;

  test.before(async () => {
    stage.shop = await createTestShop(name, { hpos: false });
    stage.card = new FakeCardGateway();
    stage.wallet = new FakeMobileWallet({ now: stage.clock });
    await Promise.all([stage.card.start(), stage.wallet.start()]);
    stage.manager = await createStaffUser(stage.shop, { ...options.manager, roles: ['shop_manager'] });
    stage.hub = await openHub(env(), stage.clock);
    const events = options.walletEvents ?? ['recurring.charge-failed.v1', 'recurring.charge-captured.v1', 'recurring.charge-canceled.v1'];
    await stage.hub.registrations.add({ registrationId: `reg-${name}`, url: WALLET_WEBHOOK_URL, events, secret: walletSecret });
    stage.worker = await startPacedWorker(env(), stage.clock);
    stage.api = await startStaffApi(env(), { clock: stage.clock });
    await announceCompanion(stage.shop, true);
  });

  test.beforeEach(async () => {
    stage.session = await logIn(stage.shop, stage.manager, { nowSeconds: Math.floor(stage.now.getTime() / 1000) });
  });

  test.after.always(async () => {
    await stage.api?.stop();
    await stage.worker?.stop();
    await stage.hub?.close();
    await Promise.allSettled([stage.card?.stop(), stage.wallet?.stop()]);
    await stage.shop?.drop();
  });

  return stage;
}
