import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { PaymentRepository } from '../../data-access/payment-repository';
import { SavedCardRepository } from '../../data-access/saved-card-repository';
import { RetryRepository } from '../../data-access/retry-repository';
import { redisNamespace } from '../../data-access/redis';
import { buildShopData, type ShopData } from './shop-data';
import { WalletRegistrationRepository } from '../../data-access/wallet-registration-repository';
import { WebhookQueue } from '../../data-access/webhook-queue';
import { WebhookRepository } from '../../data-access/webhook-repository';
import { WorkerRepository } from '../../data-access/worker-repository';
import { RunDueRetries } from '../../dunning/run-due-retries.use-case';
import { RenewalAttempt } from '../../dunning/renewal-attempt';
import { ChargeOutlookOfCase } from '../../dunning/charge-outlook.use-case';
import { CardGatewayCharges } from '../../dunning/charge-rules/card-gateway-charges';
import { MobileWalletCharges } from '../../dunning/charge-rules/mobile-wallet-charges';
import { ChargePayments } from '../../payments/charge-payments';
import { Dunning } from '../../dunning/dunning';
import { DunningDeadlines } from '../../dunning/dunning-deadlines.use-case';
import { DunningCaseRepository } from '../../data-access/dunning-case-repository';
import { CardGatewayEventHandler } from '../../payments/card-gateway/card-gateway-event-handler';
import { ProcessCardGatewayWebhook } from '../../payments/card-gateway/process-webhook.use-case';
import { ReceiveCardGatewayWebhook } from '../../payments/card-gateway/receive-webhook.use-case';
import { CardGatewayWebhookSecret } from '../../payments/card-gateway/webhook-secret';
import { FailedPaymentHandling } from '../../payments/failed-payment-handling';
import { MobileWalletEventHandler } from '../../payments/mobile-wallet/mobile-wallet-event-handler';
import { ReceiveMobileWalletWebhook } from '../../payments/mobile-wallet/receive-webhook.use-case';
import { OrderLinks } from '../../payments/order-links';
import { RenewalPaymentCompletion } from '../../payments/payment-completion';
import { PAYMENT_METHOD_SAVED, PaymentEvents, RENEWAL_ENDED, RENEWAL_PAID, SCHEDULE_RETRY } from '../../payments/payment-events';
import { PaymentRecorder } from '../../payments/payment-recorder';
import { providerClients } from '../../payments/providers/clients';
import { ReconciliationRepository } from '../../data-access/reconciliation-repository';
import { RedisProviderLimits } from '../../data-access/provider-limit-store';
import { buildReconciler } from '../../reconciliation/wiring';
import { ReconcileNow } from '../../reconciliation/reconcile-now.use-case';
import { ShowOrderPayments } from '../../dunning/order-payments.use-case';
import { CardExpiryReminderRepository } from '../../data-access/card-expiry-reminder-repository';
import { CardExpiryReminders } from '../../dunning/card-expiry-reminders.use-case';
import { PreRenewalCheckRepository } from '../../data-access/pre-renewal-check-repository';
import { PreRenewalCheck } from '../../dunning/pre-renewal-check.use-case';
import { UnwantedCharges } from '../../payments/unwanted-charges';
import { ProviderRefusalRepository } from '../../data-access/provider-refusal-repository';
import { SecondCaptureRepository } from '../../data-access/second-capture-repository';
import { PassMarks } from '../../data-access/pass-marks';
import { FlagSecondCaptures } from '../../payments/flag-second-captures.use-case';
import { providerSetup } from '../../payments/providers/configured';
import { DunningStory } from '../../dunning/dunning-story';
import { StaffChargeNow } from '../../dunning/staff-charge-now.use-case';
import { StaffPaymentLink } from '../../dunning/staff-payment-link.use-case';
import { StaffStopDunning } from '../../dunning/staff-stop-dunning.use-case';
import { StaffOrderNotes } from '../../dunning/staff-order-notes';
import { ChargeLedger } from '../../payments/charge-ledger';
import { RenewalFacts } from '../../payments/renewal-facts';
import { SettleOwnAuthorisations } from '../../payments/settle-own-authorisations.use-case';
import { SettleOpenCharges } from '../../payments/settle-open-charges.use-case';
import { HearShopOrderNotice } from '../../payments/shop-order-notice.use-case';
import { SwitchedPaymentMethods } from '../../dunning/switched-payment-methods.use-case';
import { ChargeLedgerRepository } from '../../data-access/charge-ledger-repository';

const PROVIDER_TIMEOUT_MS = 8000;

/**
 * Wires the payment hub's repositories, provider clients and use cases for one shop. The API, the
 * worker and the CLI each build it once and use the parts they need.
 */
export function buildPaymentHub(config: Config, dataSource: DataSource, log: Logger, queueRole: 'producer' | 'worker', clock: () => Date = () => new Date(), shop: ShopData = buildShopData(config, dataSource, log)) {
  const { settings, orders, orderWrites, subscriptions, activation, changes } = shop;
  const payments = new PaymentRepository(dataSource);
  const retries = new RetryRepository(dataSource);
  const webhooks = new WebhookRepository(dataSource);
  const registrations = new WalletRegistrationRepository(dataSource);
  const workers = new WorkerRepository(dataSource);
  const queue = new WebhookQueue(config.redisUrl, redisNamespace(config.db.name, config.db.tablePrefix), queueRole, log);

  // The providers' per-account limits are kept together with the other processes using the accounts.
  const providerLimits = new RedisProviderLimits(config.redisUrl, log);
  const { cardGateway, mobileWallet } = providerClients(config, { timeoutMs: PROVIDER_TIMEOUT_MS, shared: providerLimits });
  const wallet = config.mobileWallet;

  const refusals = new ProviderRefusalRepository(dataSource);
  const events = new PaymentEvents();
  const dunningCases = new DunningCaseRepository(dataSource);
  const dunning = new Dunning({ cases: dunningCases, retries, orders: orderWrites, changes, planSeconds: config.dunningPlanSeconds, config: config.dunning, log });
  // Payments tell dunning what happened; dunning decides what to do about it.
  events.on(SCHEDULE_RETRY, (event, db) => dunning.onFailedRenewal(event, db));
  events.on(PAYMENT_METHOD_SAVED, (event, db) => dunning.onNewPaymentMethod(db, event));
  events.on(RENEWAL_PAID, (event, db) => dunning.onPaid(db, event.payment, event.meta, event.via, event.now));
  events.on(RENEWAL_ENDED, (event, db) => dunning.onRenewalEnded(db, event));
  const renewalCompletion = new RenewalPaymentCompletion(orderWrites, subscriptions, activation);
  const failedPayments = new FailedPaymentHandling(orderWrites, changes, events, payments);
  // Whether a renewal still wants money (renewal-wants-money.ts): the one rule the ledger, the settle pass and the deadline ask.
  const renewals = new RenewalFacts({ orderWrites, subscriptions, cases: dunningCases });
  const ledger = new ChargeLedger({ charges: new ChargeLedgerRepository(dataSource), orderWrites, cardGateway, mobileWallet, renewals, settings, log, clock });
  const recorder = new PaymentRecorder(payments, failedPayments, renewalCompletion, changes, retries, events, ledger, new SavedCardRepository(dataSource));
  const unwantedCharges = new UnwantedCharges({ payments, orders, orderWrites, settings, cardGateway, mobileWallet, log, clock, recorder });
  // One renewal, one payment: once a renewal is paid, what else of the service's is still open for it is cancelled.
  events.on(RENEWAL_PAID, (event, db) => unwantedCharges.onOrderPaid(db, event.payment, event.now));
  // A card charge of the service's that the gateway only authorised is settled by the service (or released when the shop closed the order).
  const settleOwnAuthorisations = new SettleOwnAuthorisations({ payments, ledger, cardGateway, orders, orderWrites, recorder, refusals, settings, log, clock });
  events.on(RENEWAL_PAID, (event, db) => settleOwnAuthorisations.onPaid(db, event.payment, event.now));
  const settleOpenCharges = new SettleOpenCharges({ ledger, renewals, orders, orderWrites, payments, retries, subscriptions, recorder, unwantedCharges, events, settings, log, clock });
  const links = new OrderLinks(orders, orderWrites, retries);
  const secondCaptureRecords = new SecondCaptureRepository(dataSource);
  const cardGatewayHandler = new CardGatewayEventHandler(cardGateway, payments, orderWrites, links, recorder, settings, events, clock);
  // Reconciliation: the same handlers over paced, read-only clients of their own.
  const reconciliation = buildReconciler({
    config, cardGateway, mobileWallet, repository: new ReconciliationRepository(dataSource), orders, settings, log, clock,
    cardGatewayHandler: (client) => new CardGatewayEventHandler(client, payments, orderWrites, links, recorder, settings, events, clock, 'reconciliation'),
    mobileWalletHandler: (client) => new MobileWalletEventHandler(client, payments, orderWrites, links, recorder, settings, events, clock, 'reconciliation'),
    unwanted: unwantedCharges,
  });

  // Each provider's rules for a dunning charge, which the attempts and staff's outlook both follow.
  const chargeRules = {
    card_gateway: new CardGatewayCharges({ cardGateway, payments, orderWrites, cases: dunningCases }),
    mobile_wallet: new MobileWalletCharges({ mobileWallet, payments, orderWrites, cases: dunningCases, clock }),
  };
  const renewalAttempts = new RenewalAttempt({
    retries, payments, orders, orderWrites, recorder, failedPayments, subscriptions, settings, log, clock,
    cases: dunningCases, caps: config.dunning.caps, unwantedCharges, refusals, ledger, chargeRules,
    chargePayments: new ChargePayments({ payments, orderWrites, charges: ledger.repository, ledger }),
  });
  const runDueRetries = new RunDueRetries({ retries, attempts: renewalAttempts, clock });
  // A failed renewal's story for staff, and what they may do on it, from the same facts the engine's attempts read.
  const dunningStory = new DunningStory({
    cases: dunningCases, retries, payments, settings, providers: providerSetup(config), caps: config.dunning.caps, clock,
    outlooks: new ChargeOutlookOfCase({ payments, orders, subscriptions, settings, chargeRules }),
  });
  const staffOrderNotes = new StaffOrderNotes({ orderWrites, changes });
  const switchedPaymentMethods = new SwitchedPaymentMethods({ cases: dunningCases, orders: orderWrites, subscriptions, dunning, payments, shopOrders: orders, settings, cardGateway, mobileWallet, log, clock });

  return {
    settings, orders, orderWrites, payments, retries, webhooks, registrations, workers, queue, providerLimits, cardGateway, mobileWallet,
    changes, handOver: shop.handOver, reconciliation,
    /** The operator's `reconcile` and staff's reconcile of one order. */
    reconcileNow: new ReconcileNow(reconciliation, providerSetup(config)),
    /** The payments flagged as second captures, for /metrics. */
    secondCaptureRecords,
    /** The worker's sweep that flags a second capture of one order (src/payments/second-captures.ts). */
    secondCaptures: new FlagSecondCaptures({
      captures: secondCaptureRecords, payments, orders: orderWrites, settings, marks: new PassMarks(dataSource), log, clock,
    }),
    /** One order's payments, dunning attempts and webhooks, for staff. */
    showOrderPayments: new ShowOrderPayments({ orders, settings, payments, retries, webhooks, dunning: dunningStory }),
    /** Staff's actions on a failed renewal, from the order screen. */
    staffChargeNow: new StaffChargeNow({ orders, orderWrites, cases: dunningCases, retries, settings, story: dunningStory, attempts: renewalAttempts, notes: staffOrderNotes, log, clock }),
    staffPaymentLink: new StaffPaymentLink({ orders, orderWrites, cases: dunningCases, changes, settings, story: dunningStory, notes: staffOrderNotes, log, clock }),
    staffStopDunning: new StaffStopDunning({
      orders, orderWrites, cases: dunningCases, retries, payments, settings, unwantedCharges, ledger, openCharges: settleOpenCharges, story: dunningStory, notes: staffOrderNotes, log, clock,
    }),
    /** The worker's e-mails before a subscription's stored card expires (CARD_EXPIRY_REMINDER_*). */
    cardExpiryReminders: new CardExpiryReminders({
      reminders: new CardExpiryReminderRepository(dataSource), orderWrites, changes, settings, cardGateway,
      cardGatewayConfigured: Boolean(config.cardGateway.apiKey), config: config.cardExpiryReminders, log, clock,
    }),
    /** The worker's look at each renewal's payment method a few days before it (PRE_RENEWAL_CHECK_*). */
    preRenewalCheck: new PreRenewalCheck({
      checks: new PreRenewalCheckRepository(dataSource), facts: new CardExpiryReminderRepository(dataSource), orderWrites, changes, settings,
      cardGateway: config.cardGateway.apiKey ? cardGateway : null, mobileWallet: wallet.clientId ? mobileWallet : null,
      config: { ...config.preRenewalCheck, maxPerSecond: config.cardExpiryReminders.maxPerSecond }, log, clock,
    }),
    receiveCardGatewayWebhook: new ReceiveCardGatewayWebhook(new CardGatewayWebhookSecret(config.cardGateway.webhookSecret, cardGateway, log), webhooks, queue, log),
    processCardGatewayWebhook: new ProcessCardGatewayWebhook(webhooks, cardGatewayHandler, log),
    receiveMobileWalletWebhook: new ReceiveMobileWalletWebhook(
      registrations, { url: wallet.webhookUrl, secret: wallet.webhookSecret },
      new MobileWalletEventHandler(mobileWallet, payments, orderWrites, links, recorder, settings, events, clock), log),
    runDueRetries,
    /** The charge ledger (one open charge per renewal), and the worker's pass that closes what its renewals no longer want. */
    ledger, settleOpenCharges, settleOwnAuthorisations,
    /** The companion's notice that a renewal left the statuses awaiting payment: its open charge settled at once. */
    hearShopOrderNotice: new HearShopOrderNotice({ loggedInSecret: shop.loggedInSecret, openCharges: settleOpenCharges, log, clock }),
    dunningCases, dunning, unwantedCharges, refusals,
    switchedPaymentMethods,
    dunningDeadlines: new DunningDeadlines({
      cases: dunningCases, retries, orders: orderWrites, changes, settings, config: config.dunning, log, clock, switched: switchedPaymentMethods, ledger, openCharges: settleOpenCharges,
    }),
  };
}

export type PaymentHub = ReturnType<typeof buildPaymentHub>;
