import type { Argv } from 'yargs';
import type { PaymentRetryStatus } from '../../../../entities';
import { loadConfigOrExit } from '../../../config';
import { formatAmount, formatMeta, renderTable } from './format';
import { action, printJson, printText, withHub } from './runtime';
import { positiveInteger } from './webhooks';

const RETRY_STATUSES: PaymentRetryStatus[] = ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELED'];

export function paymentCommands(y: Argv): Argv {
  return y
    .command('list', "list an order's payments with their meta (failure code, description, state, ...)", (c) => c
      .option('order', { type: 'number', demandOption: true, describe: 'order id' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document' })
      .check((argv) => positiveInteger(argv.order, '--order')),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const payments = await withHub(config, (hub) => hub.payments.listByOrder(argv.order));
      if (argv.json) return printJson(payments);
      printText(payments.length === 0 ? `no payments for order ${argv.order}` : renderTable(
        [{ header: 'ID', align: 'right' }, { header: 'PROVIDER' }, { header: 'EXTERNAL ID', maxWidth: 40 }, { header: 'STATUS' },
          { header: 'AMOUNT', align: 'right' }, { header: 'CREATED (UTC)' }, { header: 'UPDATED (UTC)' }, { header: 'META' }],
        payments.map((p) => [p.id, p.provider, p.externalId, p.status ?? '(none)', formatAmount(p.amountMinor, p.currency), p.createdAt, p.updatedAt,
          formatMeta(p.meta)])));
    }))
    .demandCommand(1, 'name a payments command: list');
}

export function retryCommands(y: Argv): Argv {
  return y
    .command('list', 'list scheduled dunning attempts, soonest first', (c) => c
      .option('status', { type: 'string', choices: RETRY_STATUSES, coerce: (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : v), describe: 'only this status' })
      .option('order', { type: 'number', describe: 'only this renewal order' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document' })
      .check((argv) => argv.order === undefined || positiveInteger(argv.order, '--order')),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const retries = await withHub(config, (hub) => hub.retries.list({ status: argv.status as PaymentRetryStatus | undefined, orderId: argv.order }));
      if (argv.json) return printJson(retries);
      printText(retries.length === 0 ? 'no dunning attempts' : renderTable(
        [{ header: 'ID', align: 'right' }, { header: 'ORDER', align: 'right' }, { header: 'SUBSCRIPTION', align: 'right' },
          { header: 'PAYMENT', align: 'right' }, { header: 'ATTEMPT', align: 'right' }, { header: 'STATUS' }, { header: 'SCHEDULED (UTC)' },
          { header: 'RESULT', maxWidth: 60 }],
        retries.map((r) => [r.id, r.orderId, r.subscriptionId, r.paymentId, r.attempt, r.status, r.scheduledAt, r.result])));
    }))
    .demandCommand(1, 'name a retries command: list');
}
