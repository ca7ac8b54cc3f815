import type { LookupCustomer } from '../customers/lookup-customer.use-case';
import type { CancellationReason } from '../data-access/cancellation-reason-repository';
import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { LinkClaim } from '../data-access/used-card-links';
import type { StaffPaymentLink } from '../dunning/staff-payment-link.use-case';
import { noteLanguage, type NoteLanguage } from '../shop/order-note-words';
import { EDIT_SHOP_ORDERS, type StaffIdentity } from '../staff-auth/staff-identity';
import type { ListCancellationReasons, RecordCancellationReasons } from '../subscriptions/cancellation-reasons.use-case';
import type { ForceActivateSubscription } from '../subscriptions/force-activate-subscription.use-case';
import type { PauseSubscription } from '../subscriptions/pause-subscription.use-case';
import type { StaffActor } from '../subscriptions/subscription-outcomes';
import { userCan } from '../wordpress/capabilities';
import { CARD_ACTION_LIFETIME_MS, type CardActionClaims, type CardActionLinks, type CardActionName } from './card-action-links';

/** Why a link does nothing: altered (or foreign), expired, used, its agent no longer staff, what it names gone, or the service unable to check it now. */
export type LinkRefusal = { kind: 'altered' | 'expired' | 'used' | 'not_staff' | 'gone' | 'unavailable' };

/** The confirmation page of a good link: what it will do, and what the form asks. */
export interface ActionConfirmation {
  kind: 'confirm';
  language: NoteLanguage;
  action: CardActionName;
  subscriptionId: number;
  orderId: number | null;
  /** For a cancellation reason: the shop's published reasons to pick from. */
  reasons: CancellationReason[];
}

export type OpenedLink = ActionConfirmation | (LinkRefusal & { language: NoteLanguage });

/** What the form's POST came to. */
export type ActionResult =
  | { kind: 'done'; language: NoteLanguage; action: CardActionName; subscriptionId: number }
  /** The form's values refused (a pause's date): the page again, and the link still unused. */
  | { kind: 'invalid'; message: string; page: ActionConfirmation }
  /** Refused by the action's own rules, as WP admin would refuse it (the subscription's status, a case closed...). */
  | { kind: 'not_allowed'; language: NoteLanguage; message: string }
  | (LinkRefusal & { language: NoteLanguage });

export interface ActionForm {
  end_date?: string;
  reason_post_ids?: string[];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The helpdesk card's action links (CONTRACT.md, "The helpdesk card"): a link is checked (its signature, its 15
 * minutes, not used yet, its agent still a WordPress user with `edit_shop_orders`, its subscription still the matched
 * customer's), its confirmation page shown, and its action done on the form's POST, once (the claim is one Redis
 * `SET NX`), by the same use cases WP admin's routes run, as that staff member "via Dixa".
 */
export class CardActions {
  constructor(private readonly deps: {
    links: CardActionLinks;
    used: { claim(nonce: string, keepMs: number): Promise<LinkClaim>; isUsed(nonce: string): Promise<boolean | 'unavailable'>; release(nonce: string): Promise<void> };
    agents: { helpdeskAgent(email: string): Promise<StaffIdentity | null> };
    lookup: Pick<LookupCustomer, 'match'>;
    cases: Pick<DunningCaseRepository, 'openOfSubscription' | 'pool'>;
    settings: ShopSettingsRepository;
    pause: Pick<PauseSubscription, 'execute'>;
    forceActivate: Pick<ForceActivateSubscription, 'execute'>;
    listReasons: Pick<ListCancellationReasons, 'execute'>;
    recordReasons: Pick<RecordCancellationReasons, 'execute'>;
    paymentLink: Pick<StaffPaymentLink, 'execute'>;
    clock: () => Date;
  }) {}

  async open(token: string): Promise<OpenedLink> {
    const language = await this.language();
    const checked = await this.check(token);
    if (checked.kind !== 'good') return { ...checked, language };
    const used = await this.deps.used.isUsed(checked.claims.nonce);
    if (used === 'unavailable') return { kind: 'unavailable', language };
    if (used) return { kind: 'used', language };
    return this.confirmation(checked.claims, language);
  }

  async perform(token: string, form: ActionForm): Promise<ActionResult> {
    const language = await this.language();
    const checked = await this.check(token);
    if (checked.kind !== 'good') return { ...checked, language };
    const { claims, actor } = checked;
    // The form's own values are checked before the link is spent, so a mistyped date costs no new link.
    if (claims.action === 'pause' && !DATE.test(form.end_date ?? '')) {
      return { kind: 'invalid', message: 'end_date', page: await this.confirmation(claims, language) };
    }
    const reasonIds = (form.reason_post_ids ?? []).map(Number).filter((id) => Number.isSafeInteger(id) && id > 0);
    if (claims.action === 'cancellation_reason' && !reasonIds.length) {
      return { kind: 'invalid', message: 'reason_post_ids', page: await this.confirmation(claims, language) };
    }
    const claim = await this.deps.used.claim(claims.nonce, claims.expiresAt - this.deps.clock().getTime() + CARD_ACTION_LIFETIME_MS);
    if (claim === 'unavailable') return { kind: 'unavailable', language };
    if (claim === 'used') return { kind: 'used', language };
    const outcome = await this.act(claims, actor, form, reasonIds);
    if (outcome.kind === 'done') return { kind: 'done', language, action: claims.action, subscriptionId: claims.subscriptionId };
    if (outcome.kind === 'invalid') {
      await this.deps.used.release(claims.nonce);
      return { kind: 'invalid', message: outcome.message, page: await this.confirmation(claims, language) };
    }
    if (outcome.kind === 'gone') return { kind: 'gone', language };
    return { kind: 'not_allowed', language, message: outcome.message };
  }

  private async act(claims: CardActionClaims, actor: StaffActor, form: ActionForm, reasonIds: number[]): Promise<{ kind: 'done' } | { kind: 'invalid' | 'not_allowed'; message: string } | { kind: 'gone' }> {
    const refused = (outcome: { kind: string; message?: string }) => {
      if (outcome.kind === 'subscription_not_found' || outcome.kind === 'order_not_found') return { kind: 'gone' as const };
      if (outcome.kind === 'invalid_params') return { kind: 'invalid' as const, message: outcome.message ?? '' };
      return { kind: 'not_allowed' as const, message: outcome.message ?? outcome.kind };
    };
    switch (claims.action) {
      case 'pause': {
        const outcome = await this.deps.pause.execute({ subscriptionId: claims.subscriptionId, endDate: form.end_date!, actor });
        return outcome.kind === 'paused' ? { kind: 'done' } : refused(outcome);
      }
      case 'force_activate': {
        const outcome = await this.deps.forceActivate.execute({ subscriptionId: claims.subscriptionId, actor });
        return outcome.kind === 'activated' ? { kind: 'done' } : refused(outcome);
      }
      case 'cancellation_reason': {
        const outcome = await this.deps.recordReasons.execute({ subscriptionId: claims.subscriptionId, reasonPostIds: reasonIds, actor });
        return outcome.kind === 'reasons' ? { kind: 'done' } : refused(outcome);
      }
      case 'payment_link': {
        const outcome = await this.deps.paymentLink.execute({ orderId: claims.orderId!, actor });
        return outcome.kind === 'done' ? { kind: 'done' } : refused(outcome);
      }
    }
  }

  private async confirmation(claims: CardActionClaims, language: NoteLanguage): Promise<ActionConfirmation> {
    const reasons = claims.action === 'cancellation_reason' ? await this.deps.listReasons.execute() : [];
    return { kind: 'confirm', language, action: claims.action, subscriptionId: claims.subscriptionId, orderId: claims.orderId, reasons };
  }

  /** The link's signature and time, its agent, and what it names, as they are now. */
  private async check(token: string): Promise<{ kind: 'good'; claims: CardActionClaims; actor: StaffActor } | LinkRefusal> {
    const verified = this.deps.links.verify(token, this.deps.clock());
    if (!verified.ok) return { kind: verified.reason };
    const { claims } = verified;
    const agent = await this.deps.agents.helpdeskAgent(claims.agentEmail);
    if (!agent || agent.userId !== claims.agentUserId || !userCan(agent.capabilities, EDIT_SHOP_ORDERS)) return { kind: 'not_staff' };
    const settings = await this.deps.settings.current();
    // Bound to its customer: the subscription must still be one of theirs, as the card matched them.
    const match = await this.deps.lookup.match(claims.customer.includes('@') ? { email: claims.customer } : { phone: claims.customer }, settings);
    if (!match || !match.subscriptions.some((subscription) => subscription.id === claims.subscriptionId)) return { kind: 'gone' };
    if (claims.action === 'payment_link') {
      const open = await this.deps.cases.openOfSubscription(this.deps.cases.pool, claims.subscriptionId);
      if (claims.orderId === null || !open.some((found) => found.orderId === claims.orderId)) return { kind: 'gone' };
    }
    return {
      kind: 'good', claims,
      actor: { userId: agent.userId, login: agent.login, displayName: agent.displayName, email: agent.email, via: 'Dixa' },
    };
  }

  private async language(): Promise<NoteLanguage> {
    return noteLanguage((await this.deps.settings.current()).language);
  }
}
