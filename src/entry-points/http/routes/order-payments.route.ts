import type { Request, Response } from 'restify';
import type { PaymentHub } from '../../composition/payment-hub';
import { sendError, sendJson } from '../http-io';
import { pathId } from './staff-guard';

const ORDER_NOT_FOUND = 'No order with that ID.';

/** Handlers of `/payment-hub/v1/orders/{id}/...` (CONTRACT): what the service knows of one order's payments, and reconciling it now. */
export function orderPaymentHandlers(hub: Pick<PaymentHub, 'showOrderPayments' | 'reconcileNow'>) {
  return {
    /** GET `.../payments`: `{order_id, payments, retries, webhooks}`, each newest first. */
    async payments(req: Request, res: Response): Promise<void> {
      const id = pathId(req.params?.orderId);
      const outcome = id === null ? { kind: 'order_not_found' as const } : await hub.showOrderPayments.execute(id);
      if (outcome.kind === 'order_not_found') return sendError(res, 404, 'order_not_found', ORDER_NOT_FOUND);
      sendJson(res, 200, outcome.view);
    },

    /**
     * POST `.../reconcile`: asks the providers about that order now and answers what `payment-hub reconcile
     * --order=N --json` prints. A provider that could not be asked is in the answer (`summary.unreachable`, the
     * item's `outcome: 'unreachable'` and its `error`), the item left as it was, as the command reports it.
     */
    async reconcile(req: Request, res: Response): Promise<void> {
      const id = pathId(req.params?.orderId);
      const outcome = id === null ? { kind: 'order_not_found' as const } : await hub.reconcileNow.execute({ orderId: id }, { dryRun: false });
      if (outcome.kind === 'order_not_found') return sendError(res, 404, 'order_not_found', ORDER_NOT_FOUND);
      if (outcome.kind === 'declined') throw new Error('reconcile was declined without being asked');
      sendJson(res, 200, outcome.document);
    },
  };
}
