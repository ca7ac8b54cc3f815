import type { DunningCaseRepository } from '../data-access/dunning-case-repository';
import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettingsRepository } from '../data-access/shop-settings-repository';
import type { PaymentMethodNeededReason, WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import type { Logger } from '../logger';
import { isoFromGmt } from '../shop/shop-time';
import { staffName, type StaffActor } from '../subscriptions/subscription-outcomes';
import type { Provider } from '../../entities';
import { decideOnDecline } from './decline-policy';
import { recordedFacts, type DunningStory } from './dunning-story';
import { maySendPaymentLink } from './staff-actions';
import { caseToActOn, NO_DUNNING_CASE, notAllowed, type StaffActionOutcome } from './staff-action-outcome';
import { orderNoteWords } from '../shop/order-note-words';
import type { StaffOrderNotes } from './staff-order-notes';

/** What sending the payment link came to: the e-mail handed to WooCommerce (which sends it and notes it on the subscription). */
export interface PaymentLinkResult {
  outcome: 'sent';
  /** The hand-over to WooCommerce that sends it (a row of the service's WooCommerce changes). */
  change_id: number;
}

/**
 * Why the customer is asked, as the dunning engine words it for the e-mail: the latest decline's reason when the
 * decline policy asks the customer for it; the wallet's customer is sent to the app, which knows the reason; a
 * card's decline that may still pass gives none.
 */
function reasonForCustomer(provider: Provider, meta: Record<string, string>): PaymentMethodNeededReason | null {
  const decision = decideOnDecline(provider, { code: meta.failure_code || null, state: meta.failure_state || null });
  return decision.customerReason ?? (provider === 'mobile_wallet' ? 'wallet_action_required' : null);
}

/**
 * Send payment link (staff, order screen): WooCommerce e-mails the customer the "payment method needed" e-mail
 * for the failed renewal now, handed over exactly as the dunning engine hands it over (`customer_payment_method_needed`,
 * kind `failed_renewal`, with the case's deadline when it has one). Nothing else of the case changes: the planned
 * attempts stay, and no deadline is set by it.
 */
export class StaffPaymentLink {
  constructor(private readonly deps: {
    orders: OrderRepository;
    orderWrites: OrderWriteRepository;
    cases: DunningCaseRepository;
    changes: WooCommerceChangeRepository;
    settings: ShopSettingsRepository;
    story: DunningStory;
    notes: StaffOrderNotes;
    log: Logger;
    clock: () => Date;
  }) {}

  async execute(input: { orderId: number; actor: StaffActor }): Promise<StaffActionOutcome<PaymentLinkResult>> {
    const target = await caseToActOn(this.deps, 'payment_link', input.orderId);
    if (target.kind !== 'case') return target;
    const { settings } = target;
    const now = this.deps.clock();
    const facts = await this.deps.story.facts(await this.deps.story.records(target.found), now, false);
    const by = staffName(input.actor);
    const done = await this.deps.orderWrites.transaction(async (db) => {
      const found = await this.deps.cases.lockCaseOfOrder(db, input.orderId);
      if (!found) return { kind: 'refused' as const, permission: NO_DUNNING_CASE };
      const records = await this.deps.story.records(found, db);
      const permission = maySendPaymentLink({ ...facts, ...recordedFacts(records) });
      if (!permission.allowed) return { kind: 'refused' as const, permission };
      const meta = records.payments.find((payment) => payment.id === found.paymentId)?.meta ?? {};
      const changeId = await this.deps.changes.enqueue(db, {
        op: 'customer_payment_method_needed', objectId: found.subscriptionId,
        payload: {
          kind: 'failed_renewal', order_id: found.orderId, reason: reasonForCustomer(found.provider, meta),
          deadline: found.deadlineAt ? isoFromGmt(found.deadlineAt) : null, card_expires: null, masked_card: null,
        },
      }, settings, now);
      await this.deps.cases.recordStaffAction(db, { caseId: found.id, orderId: found.orderId, action: 'payment_link', attempt: null, userId: input.actor.userId, userName: by, at: now });
      await this.deps.notes.add(db, { orderId: found.orderId, text: orderNoteWords(settings).staffSentPaymentLink({ by }), actor: input.actor }, settings, now);
      return { kind: 'sent' as const, changeId, found };
    });
    if (done.kind === 'refused') return notAllowed('payment_link', done.permission, settings);
    this.deps.log.info('staff_payment_link', { orderId: input.orderId, userId: input.actor.userId, changeId: done.changeId });
    const found = (await this.deps.cases.ofOrderUnlocked(input.orderId))!;
    return { kind: 'done', result: { outcome: 'sent', change_id: done.changeId }, dunning: await this.deps.story.viewOf(found) };
  }
}
