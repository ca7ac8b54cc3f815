import type { Response } from 'restify';
import type { StaffServices } from '../../composition/staff-services';
import type { StaffIdentity } from '../../../staff-auth/staff-identity';
import { notFound, type InputOf } from '../contract/route-contract';
import { idValue } from '../contract/operation-docs';
import { sendError, sendJson, sendRefusal } from '../http-io';
import type { cancelDiscountContract, createDiscountContract, discountContract, discountsContract } from './renewal-discounts.contract';
import { sendSubscriptionRefusal } from './subscription-support.route';

/** Handlers of `/renewal-discounts/v1/...` (SPEC 4.4). */
export function renewalDiscountHandlers(staff: StaffServices) {
  return {
    async types(_input: unknown, res: Response): Promise<void> {
      sendJson(res, 200, await staff.listDiscountTypes.execute());
    },

    /** `subscription` and `order` filter; `page` / `per_page` page (WordPress's X-WP-Total headers tell the size). */
    async list({ query }: InputOf<typeof discountsContract>, res: Response): Promise<void> {
      const { discounts, total } = await staff.listDiscounts.execute({ subscriptionId: query.subscription, orderId: query.order }, query.page, query.per_page);
      sendJson(res, 200, discounts, { 'X-WP-Total': String(total), 'X-WP-TotalPages': String(Math.ceil(total / query.per_page)) });
    },

    async one({ params }: InputOf<typeof discountContract>, res: Response): Promise<void> {
      const discount = await staff.getDiscount.execute(params.id);
      if (!discount) return sendRefusal(res, notFound('discount_not_found'));
      sendJson(res, 200, discount);
    },

    /** DELETE: cancels a pending discount (200 with it, now cancelled); 409 once applied or cancelled. */
    async cancel({ params }: InputOf<typeof cancelDiscountContract>, res: Response): Promise<void> {
      const outcome = await staff.cancelDiscount.execute(params.id);
      if (outcome.kind === 'discount_not_found') return sendRefusal(res, notFound('discount_not_found'));
      if (outcome.kind === 'invalid_state') return sendError(res, 409, 'invalid_state', outcome.message);
      sendJson(res, 200, outcome.discount);
    },

    async create({ body }: InputOf<typeof createDiscountContract>, res: Response, identity: StaffIdentity): Promise<void> {
      const outcome = await staff.createDiscount.execute({
        subscriptionId: idValue(body.subscription),
        typeId: idValue(body.type),
        amount: body.amount,
        createdVia: body.created_via ?? null,
        orderId: body.order === undefined || body.order === null ? null : idValue(body.order),
        createdBy: identity.userId,
      });
      if (outcome.kind !== 'created') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 201, outcome.discount);
    },
  };
}
