import type { Request, Response } from 'restify';
import type { DiscountFilter } from '../../../data-access/renewal-discount-repository';
import { positiveId } from '../../../renewal-discounts/renewal-discounts.use-case';
import type { StaffServices } from '../../composition/staff-services';
import type { StaffIdentity } from '../../../staff-auth/staff-identity';
import { sendError, sendJson } from '../http-io';
import { jsonBody, pathId, query, sendBodyError } from './staff-guard';
import { sendSubscriptionRefusal } from './subscription-support.route';

export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 100;

/** Handlers of `/renewal-discounts/v1/...` (SPEC 4.4). */
export function renewalDiscountHandlers(staff: StaffServices) {
  return {
    async types(_req: Request, res: Response): Promise<void> {
      sendJson(res, 200, await staff.listDiscountTypes.execute());
    },

    /** `subscription` and `order` filter; `page` / `per_page` page (WordPress's X-WP-Total headers tell the size). */
    async list(req: Request, res: Response): Promise<void> {
      const params = query(req);
      const bad: string[] = [];
      const filter: DiscountFilter = {};
      const idParam = (name: string): number | undefined => {
        if (!params.has(name)) return undefined;
        const id = positiveId(params.get(name));
        if (id === null) bad.push(name);
        return id ?? undefined;
      };
      filter.subscriptionId = idParam('subscription');
      filter.orderId = idParam('order');
      const page = params.has('page') ? positiveId(params.get('page')) : 1;
      if (page === null) bad.push('page');
      const perPage = params.has('per_page') ? positiveId(params.get('per_page')) : DEFAULT_PER_PAGE;
      if (perPage === null || perPage > MAX_PER_PAGE) bad.push('per_page');
      if (bad.length) return sendError(res, 400, 'invalid_params', `Invalid parameter(s): ${bad.join(', ')}.`, { params: bad });
      const { discounts, total } = await staff.listDiscounts.execute(filter, page!, perPage!);
      sendJson(res, 200, discounts, { 'X-WP-Total': String(total), 'X-WP-TotalPages': String(Math.ceil(total / perPage!)) });
    },

    async one(req: Request, res: Response): Promise<void> {
      const id = pathId(req.params?.id);
      const discount = id === null ? null : await staff.getDiscount.execute(id);
      if (!discount) return sendError(res, 404, 'discount_not_found', 'No discount with that ID.');
      sendJson(res, 200, discount);
    },

    /** DELETE: cancels a pending discount (200 with it, now cancelled); 409 once applied or cancelled. */
    async cancel(req: Request, res: Response): Promise<void> {
      const id = pathId(req.params?.id);
      const outcome = id === null ? { kind: 'discount_not_found' as const } : await staff.cancelDiscount.execute(id);
      if (outcome.kind === 'discount_not_found') return sendError(res, 404, 'discount_not_found', 'No discount with that ID.');
      if (outcome.kind === 'invalid_state') return sendError(res, 409, 'invalid_state', outcome.message);
      sendJson(res, 200, outcome.discount);
    },

    async create(req: Request, res: Response, identity: StaffIdentity): Promise<void> {
      const body = await jsonBody(req);
      if (!body.ok) return sendBodyError(res, body);
      const outcome = await staff.createDiscount.execute({ body: body.body, createdBy: identity.userId });
      if (outcome.kind !== 'created') return sendSubscriptionRefusal(res, outcome);
      sendJson(res, 201, outcome.discount);
    },
  };
}
