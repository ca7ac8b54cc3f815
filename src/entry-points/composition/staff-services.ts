import type { DataSource } from 'typeorm';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { CancellationReasonRepository } from '../../data-access/cancellation-reason-repository';
import { CustomerContactIndex } from '../../data-access/customer-contact-index';
import { RenewalDiscountRepository } from '../../data-access/renewal-discount-repository';
import { WordPressUserRepository } from '../../data-access/wordpress-user-repository';
import { LookupCustomer } from '../../customers/lookup-customer.use-case';
import { RefreshCustomerContacts } from '../../customers/refresh-customer-contacts.use-case';
import { CancelDiscount, CreateDiscount, GetDiscount, ListDiscounts, ListDiscountTypes } from '../../renewal-discounts/renewal-discounts.use-case';
import { buildShopData, type ShopData } from './shop-data';
import { AuthenticateStaff } from '../../staff-auth/authenticate-staff.use-case';
import {
  GetRecordedCancellationReason, ListCancellationReasons, ListRecordedCancellationReasons, RecordCancellationReasons,
} from '../../subscriptions/cancellation-reasons.use-case';
import { ForceActivateSubscription } from '../../subscriptions/force-activate-subscription.use-case';
import { PauseSubscription } from '../../subscriptions/pause-subscription.use-case';
import { ReactivatePausedSubscriptions } from '../../subscriptions/reactivate-paused-subscriptions.use-case';

/**
 * Wires the staff routes' repositories and use cases for one shop: customer lookup, subscription support,
 * renewal discounts and staff authentication, plus the two worker jobs (contact index refresh, end of pauses).
 */
export function buildStaffServices(config: Config, dataSource: DataSource, log: Logger, clock: () => Date = () => new Date(), shop: ShopData = buildShopData(config, dataSource, log)) {
  const { settings, orders, orderWrites, subscriptions, actions, changes, activation, extensions, site, siteUrl } = shop;
  const reasons = new CancellationReasonRepository(dataSource);
  const discounts = new RenewalDiscountRepository(dataSource);
  const contacts = new CustomerContactIndex(dataSource);
  const users = new WordPressUserRepository(dataSource);
  const refreshCustomerContacts = new RefreshCustomerContacts({ index: contacts, settings, log, clock });
  const discountDeps = { discounts, subscriptions, orders, settings, siteUrl, log, clock };
  const reasonDeps = { reasons, subscriptions, orderWrites, settings, clock };

  return {
    authenticate: new AuthenticateStaff({ config, users, site, settings, siteUrl, log, clock, tablePrefix: config.db.tablePrefix }),
    lookupCustomer: new LookupCustomer({ index: contacts, orders, settings, extensions, newContacts: refreshCustomerContacts, log }),
    refreshCustomerContacts,
    listCancellationReasons: new ListCancellationReasons(reasonDeps),
    listRecordedCancellationReasons: new ListRecordedCancellationReasons(reasonDeps),
    getRecordedCancellationReason: new GetRecordedCancellationReason(reasonDeps),
    recordCancellationReasons: new RecordCancellationReasons(reasonDeps),
    pauseSubscription: new PauseSubscription({ subscriptions, orderWrites, actions, changes, settings, clock }),
    forceActivateSubscription: new ForceActivateSubscription({ subscriptions, orderWrites, activation, settings, clock }),
    reactivatePausedSubscriptions: new ReactivatePausedSubscriptions({ subscriptions, orderWrites, activation, changes, settings, log }),
    listDiscountTypes: new ListDiscountTypes(discountDeps),
    listDiscounts: new ListDiscounts(discountDeps),
    getDiscount: new GetDiscount(discountDeps),
    createDiscount: new CreateDiscount(discountDeps),
    cancelDiscount: new CancelDiscount(discountDeps),
  };
}

export type StaffServices = ReturnType<typeof buildStaffServices>;
