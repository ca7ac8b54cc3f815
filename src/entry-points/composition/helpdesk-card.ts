import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import { PaymentRepository } from '../../data-access/payment-repository';
import type { RedisClient } from '../../data-access/redis';
import { SavedCardRepository } from '../../data-access/saved-card-repository';
import { UsedCardLinks } from '../../data-access/used-card-links';
import { CardActionLinks } from '../../helpdesk-card/card-action-links';
import { CardActions } from '../../helpdesk-card/card-actions.use-case';
import { ShowHelpdeskCard } from '../../helpdesk-card/show-helpdesk-card.use-case';
import type { PaymentHub } from './payment-hub';
import type { ShopData } from './shop-data';
import type { StaffServices } from './staff-services';

/**
 * The helpdesk card (Dixa's custom card) and its action links: the customer lookup's match, the Payments panel's
 * story, and the staff use cases WP admin's routes run. Without HELPDESK_CARD_TOKEN there are no links to sign
 * (and the card route refuses every request).
 */
export function buildHelpdeskCard(deps: {
  config: Config; dataSource: DataSource; shop: ShopData; staff: StaffServices; hub: PaymentHub; redis: RedisClient; namespace: string; clock: () => Date;
}) {
  const { config, dataSource, shop, staff, hub, clock } = deps;
  const links = config.helpdesk.cardToken ? new CardActionLinks(config.helpdesk.cardToken) : null;
  const card = new ShowHelpdeskCard({
    lookup: staff.lookupCustomer, settings: shop.settings, agents: staff.authenticate, cases: hub.dunningCases, orderPayments: hub.showOrderPayments,
    orders: shop.orders, savedCards: new SavedCardRepository(dataSource), payments: new PaymentRepository(dataSource), extensions: shop.extensions, links, clock,
  });
  const actions = links && new CardActions({
    links, used: new UsedCardLinks(deps.redis, deps.namespace), agents: staff.authenticate, lookup: staff.lookupCustomer, cases: hub.dunningCases,
    settings: shop.settings, pause: staff.pauseSubscription, forceActivate: staff.forceActivateSubscription, listReasons: staff.listCancellationReasons,
    recordReasons: staff.recordCancellationReasons, paymentLink: hub.staffPaymentLink, clock,
  });
  return { card, actions };
}
