import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { Executor } from '../data-access/transaction';
import { companionAddsStaffNotes, type WooCommerceChangeRepository } from '../data-access/woocommerce-change-repository';
import { actorAuthor, type StaffActor } from '../subscriptions/subscription-outcomes';

/**
 * The order note of a staff action on a failed renewal, as WP admin adds one: `add_order_note($note, 0, true)` by
 * the staff member. WooCommerce adds it itself (the companion's `order_note`), so that plugins listening to
 * `woocommerce_order_note_added` hear it, and it follows the changes handed over before it for the same order (a
 * payment's completion after Charge now). A companion older than version 4 cannot; the note is then written as
 * WooCommerce writes it, in the staff member's name, unheard.
 */
export class StaffOrderNotes {
  constructor(private readonly deps: { orderWrites: OrderWriteRepository; changes: WooCommerceChangeRepository }) {}

  async add(db: Executor, note: { orderId: number; text: string; actor: StaffActor }, settings: ShopSettings, now: Date): Promise<void> {
    if (companionAddsStaffNotes(settings)) {
      await this.deps.changes.enqueue(db, { op: 'order_note', objectId: note.orderId, payload: { note: note.text, user_id: note.actor.userId } }, settings, now);
      return;
    }
    await this.deps.orderWrites.addNote(db, note.orderId, note.text, settings, now, actorAuthor(note.actor));
  }
}
