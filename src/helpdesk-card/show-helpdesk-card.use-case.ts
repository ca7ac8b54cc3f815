import type { CustomerMatch, LookupCustomer } from '../customers/lookup-customer.use-case';
import { emailKey, suppliedPhoneKey } from '../customers/contact-keys';
import { customerContact } from '../customers/customer-record';
import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderRepository } from '../data-access/order-repository';
import type { PaymentRepository } from '../data-access/payment-repository';
import type { SavedCardDetails, SavedCardRepository } from '../data-access/saved-card-repository';
import type { ShopSettings, ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { DunningView } from '../dunning/dunning-story';
import type { ShowOrderPayments } from '../dunning/order-payments.use-case';
import { describeOrderStatus } from '../order-status/lookup-order-status.use-case';
import { orderEditUrl } from '../shop/admin-urls';
import { shopPrice } from '../shop/money';
import { displayedOrderNumber, type ShopOrder } from '../shop/order';
import { noteLanguage, orderNoteWords, type NoteLanguage } from '../shop/order-note-words';
import type { SiteExtensions } from '../shop/site-extensions';
import type { ShopSubscription } from '../shop/subscription';
import { EDIT_SHOP_ORDERS, type StaffIdentity } from '../staff-auth/staff-identity';
import { PAUSABLE } from '../subscriptions/pause-subscription.use-case';
import { userCan } from '../wordpress/capabilities';
import type { CardActionLinks, CardActionName } from './card-action-links';
import { cardWords, type CardWords } from './card-words';

/** The card's action, as the template shows it: a link to the service's confirmation page. */
export interface CardAction {
  action: CardActionName;
  label: string;
  url: string;
}

export interface CardSubscription {
  id: number;
  status: string;
  status_label: string;
  products: string;
  total: string;
  next_payment: string | null;
  payment_method: string | null;
  failed_renewal: null | { order_id: number; headline: string; next: string; actions: CardAction[] };
  actions: CardAction[];
  admin_url: string;
}

export interface CardOrder {
  number: string;
  status_label: string;
  date_created: string | null;
  total: string;
  tracking_url: string | null;
  estimated_delivery: string | null;
  admin_url: string;
}

/** GET /helpdesk/v1/card's answer (CONTRACT.md, "The helpdesk card"). */
export interface HelpdeskCard {
  language: NoteLanguage;
  customer: null | { name: string; email: string | null; phone: string | null };
  subscriptions: CardSubscription[];
  orders: CardOrder[];
}

export interface CardQuery {
  email: string;
  phone: string;
  agent: string;
  /** Where the action links point: `https://<service host>`. */
  serviceOrigin: string;
}

/** The card lists so many of the customer's subscriptions and orders, newest first. */
const CARD_SUBSCRIPTIONS = 10;
const CARD_ORDERS = 5;

/**
 * The helpdesk's custom card for one conversation (Dixa): who the customer is (matched as the customer lookup
 * matches, by the e-mail, else by the phone), their subscriptions with what a failed renewal's story says (the
 * Payments panel's), their last orders, and the links an agent who is shop staff may use from the conversation.
 */
export class ShowHelpdeskCard {
  constructor(private readonly deps: {
    lookup: Pick<LookupCustomer, 'match'>;
    settings: ShopSettingsRepository;
    agents: { helpdeskAgent(email: string): Promise<StaffIdentity | null> };
    cases: Pick<DunningCaseRepository, 'openOfSubscription' | 'pool'>;
    orderPayments: Pick<ShowOrderPayments, 'execute'>;
    orders: Pick<OrderRepository, 'findManyByIds'>;
    savedCards: Pick<SavedCardRepository, 'cardDetails'>;
    payments: Pick<PaymentRepository, 'agreementsByExternalIds'>;
    extensions: SiteExtensions;
    links: CardActionLinks | null;
    clock: () => Date;
  }) {}

  async execute(query: CardQuery): Promise<HelpdeskCard> {
    const settings = await this.deps.settings.current();
    const language = noteLanguage(settings.language);
    const empty: HelpdeskCard = { language, customer: null, subscriptions: [], orders: [] };
    const [found, agent] = await Promise.all([this.match(query, settings), this.deps.agents.helpdeskAgent(query.agent)]);
    if (!found) return empty;
    const { match, customer } = found;
    const words = cardWords(language);
    const staff = agent && userCan(agent.capabilities, EDIT_SHOP_ORDERS) && this.deps.links ? agent : null;
    const link = (action: CardActionName, subscriptionId: number, orderId: number | null): CardAction => ({
      action,
      label: words.action(action),
      url: `${query.serviceOrigin}/helpdesk/v1/card/actions/${this.deps.links!.make({
        action, subscriptionId, orderId, customer, agentUserId: staff!.userId, agentEmail: staff!.email,
      }, this.deps.clock())}`,
    });

    const subscriptions = match.subscriptions.slice(0, CARD_SUBSCRIPTIONS);
    const [methods, failures, orders] = await Promise.all([
      this.paymentMethods(subscriptions, words),
      Promise.all(subscriptions.map((subscription) => this.failedRenewal(subscription, settings, words))),
      Promise.all(match.orders.slice(0, CARD_ORDERS).map((order) => this.order(order, settings, words))),
    ]);
    return {
      language,
      customer: customerContact(match.anchor, settings),
      subscriptions: subscriptions.map((subscription, index) => {
        const failure = failures[index]!;
        const actions: CardAction[] = [];
        if (staff) {
          if (PAUSABLE.includes(subscription.status)) actions.push(link('pause', subscription.id, null));
          if (subscription.status === 'on-hold' && !(subscription.end && subscription.end.getTime() <= this.deps.clock().getTime())) actions.push(link('force_activate', subscription.id, null));
          actions.push(link('cancellation_reason', subscription.id, null));
        }
        return {
          id: subscription.id,
          status: subscription.status,
          status_label: words.status(subscription.status),
          products: subscription.items.filter((item) => item.type === 'line_item').map((item) => `${item.name}${Number(item.meta._qty) > 1 ? ` × ${Number(item.meta._qty)}` : ''}`).join(', '),
          total: shopPrice(subscription.recurringTotal, subscription.currency, settings.priceDecimals, settings.priceFormat),
          next_payment: subscription.nextPayment && !['cancelled', 'expired', 'pending-cancel'].includes(subscription.status) ? orderNoteWords(settings).time(subscription.nextPayment) : null,
          payment_method: methods.get(subscription.id) ?? (subscription.paymentMethodTitle || null),
          failed_renewal: failure && {
            order_id: failure.orderId,
            headline: failure.headline,
            next: failure.next,
            actions: staff && failure.story.actions.payment_link.allowed ? [link('payment_link', subscription.id, failure.orderId)] : [],
          },
          actions,
          admin_url: orderEditUrl(settings.siteUrl, subscription.id, 'shop_subscription', settings.hpos),
        };
      }),
      orders,
    };
  }

  /** By the e-mail first (the conversation's own address), else by the phone; with the contact key it matched by. */
  private async match(query: CardQuery, settings: ShopSettings): Promise<{ match: CustomerMatch; customer: string } | null> {
    const email = emailKey(query.email);
    if (email) {
      const match = await this.deps.lookup.match({ email: query.email }, settings);
      if (match) return { match, customer: email };
    }
    const phone = suppliedPhoneKey(query.phone, settings.baseCountry);
    if (phone) {
      const match = await this.deps.lookup.match({ phone: query.phone }, settings);
      if (match) return { match, customer: phone };
    }
    return null;
  }

  /** Each subscription's payment method as a person reads it: the saved card WooCommerce has, or the MobilePay agreement's state. */
  private async paymentMethods(subscriptions: CustomerMatch['subscriptions'], words: CardWords): Promise<Map<number, string>> {
    const tokens = subscriptions.map((subscription) => subscription.meta._reepay_token?.trim()).filter((token): token is string => Boolean(token));
    const agreementIds = subscriptions.map((subscription) => subscription.meta._agreement_id?.trim()).filter((id): id is string => Boolean(id));
    const [cards, agreements] = await Promise.all([
      this.deps.savedCards.cardDetails(tokens),
      this.deps.payments.agreementsByExternalIds('mobile_wallet', agreementIds),
    ]);
    const phrases = new Map<number, string>();
    for (const subscription of subscriptions) {
      const token = subscription.meta._reepay_token?.trim();
      const agreementId = subscription.meta._agreement_id?.trim();
      if (subscription.paymentMethod.startsWith('reepay') && token) {
        const card = cards.get(token);
        phrases.set(subscription.id, card?.last4 ? words.card({ brand: brandOf(card), last4: card.last4, expires: expiresOf(card) }) : words.cardUnknown);
      } else if (subscription.paymentMethod.startsWith('vipps') && agreementId) {
        const status = agreements.get(agreementId)?.status;
        phrases.set(subscription.id, words.wallet(status === 'ACTIVE' ? 'active' : status === 'PENDING' ? 'pending' : status === 'DISABLED' ? 'stopped' : 'unknown'));
      }
    }
    return phrases;
  }

  /** The subscription's renewal whose dunning is open, told as the Payments panel tells it; null when none is. */
  private async failedRenewal(subscription: ShopSubscription, settings: ShopSettings, words: CardWords): Promise<{ orderId: number; headline: string; next: string; story: DunningView } | null> {
    const [open] = await this.deps.cases.openOfSubscription(this.deps.cases.pool, subscription.id);
    if (!open) return null;
    const shown = await this.deps.orderPayments.execute(open.orderId);
    const story = shown.kind === 'found' ? shown.view.dunning : null;
    if (!story || story.status !== 'open') return null;
    const notes = orderNoteWords(settings);
    const [order] = await this.deps.orders.findManyByIds([open.orderId], settings, 'shop_order');
    const number = order ? displayedOrderNumber(order, settings.orderNumbers) : String(open.orderId);
    const why = notes.decline(story.provider, { code: story.failure.reason, state: story.failure.state }).words;
    const at = (iso: string) => notes.time(new Date(iso));
    const next = story.next === null ? words.nothingPlanned
      : story.next.event === 'attempt' ? words.nextAttempt(at(story.next.at))
        : story.next.event === 'wallet_retrying' ? words.walletRetrying(at(story.next.until))
          : words.deadline(at(story.next.at));
    return { orderId: open.orderId, headline: words.renewalFailed({ number, at: at(story.failure.at), why }), next, story };
  }

  private async order(order: ShopOrder, settings: ShopSettings, words: CardWords): Promise<CardOrder> {
    const described = await describeOrderStatus(order, settings, this.deps.extensions);
    const tracking = (described.tracking as { tracking_url?: unknown } | undefined)?.tracking_url;
    const estimated = described.estimated_delivery;
    return {
      number: displayedOrderNumber(order, settings.orderNumbers),
      status_label: words.status(order.status),
      date_created: order.dateCreated ? orderNoteWords(settings).time(order.dateCreated) : null,
      total: shopPrice(order.total, order.currency, settings.priceDecimals, settings.priceFormat),
      tracking_url: typeof tracking === 'string' && tracking !== '' ? tracking : null,
      estimated_delivery: typeof estimated === 'string' ? estimated : null,
      admin_url: orderEditUrl(settings.siteUrl, order.id, 'shop_order', settings.hpos),
    };
  }
}

/** WooCommerce's card type (`visa`, `mastercard`) as the brand is written. */
function brandOf(card: SavedCardDetails): string {
  const type = card.cardType.trim();
  const known: Record<string, string> = { visa: 'Visa', visa_dk: 'Visa/Dankort', mastercard: 'Mastercard', mc: 'Mastercard', dankort: 'Dankort', amex: 'American Express', maestro: 'Maestro' };
  return known[type.toLowerCase()] ?? (type ? type[0]!.toUpperCase() + type.slice(1) : 'Card');
}

/** `MM/YY`, as the card shows it. */
function expiresOf(card: SavedCardDetails): string | null {
  const month = Number(card.expiryMonth);
  const year = Number(card.expiryYear);
  if (!Number.isInteger(month) || month < 1 || month > 12 || !Number.isInteger(year) || year <= 0) return null;
  return `${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`;
}
