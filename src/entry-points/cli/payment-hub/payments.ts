import type { Argv } from 'yargs';
import type { PaymentRetryStatus } from '../../../../entities';
import { loadConfigOrExit } from '../../../config';
import type { PaymentRecord } from '../../../data-access/payment-repository';
import type { RetryRecord } from '../../../data-access/retry-repository';
import { formatAmount, formatMeta } from './format';
import { LIST_FORMATS, outputOptions, printList, type FieldSet } from './output';
import { action, CliError, withHub } from './runtime';
import { positiveInteger } from './webhooks';

const RETRY_STATUSES: PaymentRetryStatus[] = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELED'];

type PaymentWithMeta = PaymentRecord & { meta: Record<string, string> };

/** A payment's fields; the table shows the amount in major units with its currency, and the meta as `key=value`. */
export const PAYMENT_LIST: FieldSet<PaymentWithMeta> = {
  fields: [
    { name: 'id', header: 'ID', align: 'right', value: (p) => p.id },
    { name: 'provider', header: 'PROVIDER', value: (p) => p.provider },
    { name: 'external_id', header: 'EXTERNAL ID', maxWidth: 40, value: (p) => p.externalId },
    { name: 'status', header: 'STATUS', value: (p) => p.status, text: (p) => p.status ?? '(none)' },
    { name: 'order_id', header: 'ORDER', align: 'right', value: (p) => p.orderId },
    { name: 'agreement_id', header: 'AGREEMENT', align: 'right', value: (p) => p.agreementId },
    { name: 'amount_minor', header: 'AMOUNT', align: 'right', value: (p) => p.amountMinor, text: (p) => formatAmount(p.amountMinor, p.currency) },
    { name: 'currency', header: 'CURRENCY', value: (p) => p.currency },
    { name: 'created_at', header: 'CREATED (UTC)', value: (p) => p.createdAt },
    { name: 'updated_at', header: 'UPDATED (UTC)', value: (p) => p.updatedAt },
    { name: 'meta', header: 'META', value: (p) => p.meta, text: (p) => formatMeta(p.meta) },
  ],
  tableDefault: ['id', 'provider', 'external_id', 'status', 'amount_minor', 'created_at', 'updated_at', 'meta'],
};

export const RETRY_LIST: FieldSet<RetryRecord> = {
  fields: [
    { name: 'id', header: 'ID', align: 'right', value: (r) => r.id },
    { name: 'order_id', header: 'ORDER', align: 'right', value: (r) => r.orderId },
    { name: 'subscription_id', header: 'SUBSCRIPTION', align: 'right', value: (r) => r.subscriptionId },
    { name: 'payment_id', header: 'PAYMENT', align: 'right', value: (r) => r.paymentId },
    { name: 'attempt', header: 'ATTEMPT', align: 'right', value: (r) => r.attempt },
    { name: 'plan', header: 'PLAN', value: (r) => r.plan },
    { name: 'status', header: 'STATUS', value: (r) => r.status },
    { name: 'scheduled_at', header: 'SCHEDULED (UTC)', value: (r) => r.scheduledAt },
    { name: 'idempotency_key', header: 'IDEMPOTENCY KEY', value: (r) => r.idempotencyKey },
    { name: 'result', header: 'RESULT', maxWidth: 60, value: (r) => r.result },
  ],
  tableDefault: ['id', 'order_id', 'subscription_id', 'payment_id', 'attempt', 'plan', 'status', 'scheduled_at', 'result'],
};

export function paymentCommands(y: Argv): Argv {
  return y
    .command('list', "list an order's payments with their meta (failure code, description, state, ...)", (c) => outputOptions(c
      .option('order', { type: 'number', demandOption: true, describe: 'order id' })
      .check((argv) => positiveInteger(argv.order, '--order')), LIST_FORMATS, PAYMENT_LIST),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const listed = await withHub(config, (hub) => hub.showOrderPayments.payments(argv.order));
      // As `reconcile --order` and the payments route: an order that does not exist is not an order without payments.
      if (listed.kind === 'order_not_found') throw new CliError(`order ${argv.order} does not exist`);
      printList(listed.payments, PAYMENT_LIST, argv, `no payments for order ${argv.order}`);
    }))
    .demandCommand(1, 'name a payments command: list');
}

export function retryCommands(y: Argv): Argv {
  return y
    .command('list', 'list scheduled dunning attempts, soonest first', (c) => outputOptions(c
      .option('status', { type: 'string', choices: RETRY_STATUSES, coerce: (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : v), describe: 'only this status' })
      .option('order', { type: 'number', describe: 'only this renewal order' })
      .check((argv) => argv.order === undefined || positiveInteger(argv.order, '--order')), LIST_FORMATS, RETRY_LIST),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const retries = await withHub(config, (hub) => hub.retries.list({ status: argv.status as PaymentRetryStatus | undefined, orderId: argv.order }));
      printList(retries, RETRY_LIST, argv, 'no dunning attempts');
    }))
    .demandCommand(1, 'name a retries command: list');
}
