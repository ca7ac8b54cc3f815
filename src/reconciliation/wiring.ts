import type { UnwantedCharges } from '../payments/unwanted-charges';
import type { Config } from '../config';
import type { OrderRepository } from '../data-access/order-repository';
import type { ReconciliationRepository } from '../data-access/reconciliation-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { Logger } from '../logger';
import type { CardGatewayEventHandler } from '../payments/card-gateway/card-gateway-event-handler';
import type { MobileWalletEventHandler } from '../payments/mobile-wallet/mobile-wallet-event-handler';
import type { CardGatewayClient } from '../payments/providers/card-gateway/client';
import type { MobileWalletClient } from '../payments/providers/mobile-wallet/client';
import { configuredProviders } from '../payments/providers/configured';
import { Pacer, readOnlyPaced } from './pacer';
import { Reconciler } from './reconciler';

/**
 * The reconciler of one process: each provider's reads paced at RECONCILE_MAX_PER_SECOND (the reads that
 * decide and the handlers' reads back share the pace), and its own event handlers over those clients.
 */
export function buildReconciler(deps: {
  config: Config;
  cardGateway: CardGatewayClient;
  mobileWallet: MobileWalletClient;
  repository: ReconciliationRepository;
  orders: OrderRepository;
  settings: ShopSettingsRepository;
  log: Logger;
  clock: () => Date;
  cardGatewayHandler: (client: CardGatewayClient) => CardGatewayEventHandler;
  mobileWalletHandler: (client: MobileWalletClient) => MobileWalletEventHandler;
  unwanted?: Pick<UnwantedCharges, 'cancelIfUnwanted'>;
}): Reconciler {
  const { config } = deps;
  const cardGateway = readOnlyPaced(deps.cardGateway, new Pacer(config.reconcile.maxPerSecond), ['getInvoice', 'getCharge', 'getPaymentMethod']);
  const mobileWallet = readOnlyPaced(deps.mobileWallet, new Pacer(config.reconcile.maxPerSecond), ['getAgreement', 'getCharge']);
  return new Reconciler({
    config: config.reconcile, repository: deps.repository, orders: deps.orders, settings: deps.settings, cardGateway, mobileWallet,
    cardGatewayHandler: deps.cardGatewayHandler(cardGateway), mobileWalletHandler: deps.mobileWalletHandler(mobileWallet),
    configured: configuredProviders(config), log: deps.log, clock: deps.clock, unwanted: deps.unwanted,
  });
}
