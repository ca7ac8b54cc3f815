import type { Response } from 'restify';
import type { PaymentHub } from '../../composition/payment-hub';
import { notFound, type InputOf } from '../contract/route-contract';
import { sendJson, sendRefusal } from '../http-io';
import type { orderPaymentsContract, reconcileOrderContract } from './order-payments.contract';

/** Handlers of `/payment-hub/v1/orders/{id}/...` (CONTRACT): what the service knows of one order's payments, and reconciling it now. */
export function orderPaymentHandlers(hub: Pick<PaymentHub, 'showOrderPayments' | 'reconcileNow'>) {
  return {
    /** GET `.../payments`: `{order_id, payments, retries, webhooks}`, each newest first. */
    async payments({ params }: InputOf<typeof orderPaymentsContract>, res: Response): Promise<void> {
      const outcome = await hub.showOrderPayments.execute(params.orderId);
      if (outcome.kind === 'order_not_found') return sendRefusal(res, notFound('order_not_found'));
      sendJson(res, 200, outcome.view);
    },

    /**
     * POST `.../reconcile`: asks the providers about that order now and answers what `payment-hub reconcile
     * --order=N --json` prints. A provider that could not be asked is in the answer (`summary.unreachable`, the
     * item's `outcome: 'unreachable'` and its `error`), the item left as it was, as the command reports it; one not
     * configured is not asked (`skipped`).
     */
    async reconcile({ params }: InputOf<typeof reconcileOrderContract>, res: Response): Promise<void> {
      const outcome = await hub.reconcileNow.execute({ orderId: params.orderId }, { dryRun: false });
      if (outcome.kind === 'order_not_found') return sendRefusal(res, notFound('order_not_found'));
      if (outcome.kind === 'declined') throw new Error('reconcile was declined without being asked');
      sendJson(res, 200, outcome.document);
    },
  };
}
