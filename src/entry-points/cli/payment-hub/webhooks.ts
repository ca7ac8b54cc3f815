import type { Argv } from 'yargs';
import type { Provider, WebhookStatus } from '../../../../entities';
import type { PaymentHub } from '../../../composition';
import { loadConfigOrExit } from '../../../config';
import type { WebhookRecord } from '../../../data-access/webhook-repository';
import { renderFields, renderTable } from './format';
import { action, CliError, EXIT_FAILED, EXIT_OK, printJson, printText, statusLine, withHub } from './runtime';

const STATUSES: WebhookStatus[] = ['PENDING', 'PROCESSED', 'SKIPPED', 'FAILED'];
const PROVIDERS: Provider[] = ['card_gateway', 'mobile_wallet'];
/** How long to wait for a worker that took the webhook between our requeue and our claim. */
const WORKER_WAIT_MS = 30_000;

export type RetryResult =
  | { id: number; status: 'PROCESSED' | 'SKIPPED'; note: string }
  | { id: number; status: 'FAILED'; error: string }
  /** Not retried at all: unknown, not FAILED, or not a card-gateway webhook. */
  | { id: number; status: 'NOT_RETRIED'; error: string };

const withoutBody = ({ rawBody, ...webhook }: WebhookRecord) => webhook;

export function webhookCommands(y: Argv): Argv {
  return y
    .command('list', 'list received webhooks, newest first', (c) => c
      .option('status', { type: 'string', choices: STATUSES, coerce: upper, describe: 'only this status' })
      .option('provider', { type: 'string', choices: PROVIDERS, describe: 'only this provider' })
      .option('limit', { type: 'number', default: 50, describe: 'at most this many (1-1000)' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document' })
      .check((argv) => positiveInteger(argv.limit, '--limit', 1000)),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const webhooks = await withHub(config, (hub) =>
        hub.webhooks.list({ status: argv.status as WebhookStatus | undefined, provider: argv.provider as Provider | undefined, limit: argv.limit }));
      if (argv.json) return printJson(webhooks.map(withoutBody));
      printText(webhooks.length === 0 ? 'no webhooks' : renderTable(
        [{ header: 'ID', align: 'right' }, { header: 'PROVIDER' }, { header: 'EVENT' }, { header: 'STATUS' }, { header: 'ATTEMPTS', align: 'right' },
          { header: 'CREATED (UTC)' }, { header: 'EXTERNAL ID', maxWidth: 40 }, { header: 'LAST ERROR', maxWidth: 60 }],
        webhooks.map((w) => [w.id, w.provider, w.eventType, w.status, w.attempts, w.createdAt, w.externalId, w.lastError])));
    }))
    .command('show', 'show one webhook with its raw body', (c) => c
      .option('id', { type: 'number', demandOption: true, describe: 'webhook id' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document' })
      .check((argv) => positiveInteger(argv.id, '--id')),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const webhook = await withHub(config, (hub) => hub.webhooks.find(argv.id));
      if (!webhook) throw new CliError(`webhook ${argv.id} does not exist`);
      const body = webhook.rawBody.toString('utf8');
      if (argv.json) return printJson({ ...withoutBody(webhook), rawBody: body });
      printText(renderFields([
        ['id', webhook.id], ['provider', webhook.provider], ['external id', webhook.externalId], ['event', webhook.eventType],
        ['status', webhook.status], ['attempts', webhook.attempts], ['outcome', webhook.outcome], ['last error', webhook.lastError],
        ['next attempt (UTC)', webhook.nextAttemptAt], ['created (UTC)', webhook.createdAt], ['updated (UTC)', webhook.updatedAt],
        ['processed (UTC)', webhook.processedAt],
      ]));
      // The body exactly as received, so it can be compared with the provider's own log.
      printText(`raw body:\n${body}`);
    }))
    .command('retry', 'process a FAILED webhook again now (--id), or every FAILED one (--all-failed)', (c) => c
      .option('id', { type: 'number', describe: 'webhook id' })
      // No default: yargs counts a defaulted flag as given, which would trip the conflict with --id.
      .option('all-failed', { type: 'boolean', describe: 'retry every FAILED webhook, with a progress bar' })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON document' })
      .conflicts('id', 'all-failed')
      .check((argv) => {
        if (argv.id === undefined && !argv['all-failed']) throw new Error('name the webhook with --id=N, or pass --all-failed');
        return argv.id === undefined || positiveInteger(argv.id, '--id');
      }),
    action(async (argv) => {
      const config = loadConfigOrExit();
      return withHub(config, async (hub) => {
        if (argv.id !== undefined) return retrySingle(hub, argv.id, argv.json);
        return retryAll(hub, argv.json);
      });
    }))
    .demandCommand(1, 'name a webhooks command: list, show or retry');
}

async function retrySingle(hub: PaymentHub, id: number, json: boolean): Promise<number> {
  const result = await retryWebhook(hub, id);
  if (result.status === 'NOT_RETRIED') throw new CliError(result.error);
  if (json) printJson(result);
  else printText(describeRetry(result));
  return result.status === 'FAILED' ? EXIT_FAILED : EXIT_OK;
}

async function retryAll(hub: PaymentHub, json: boolean): Promise<number> {
  const ids = await hub.webhooks.failedIds();
  const results: RetryResult[] = [];
  const progress = !json && statusLine.enabled;
  if (progress) statusLine.progress(0, ids.length);
  for (const id of ids) {
    results.push(await retryWebhook(hub, id));
    if (progress) statusLine.progress(results.length, ids.length);
  }
  statusLine.finish();
  const summary = summarize(results);
  const failed = results.filter((result) => result.status === 'FAILED' || result.status === 'NOT_RETRIED');
  if (json) printJson({ ...summary, results });
  else printText([describeSummary(summary), ...failed.map(describeRetry)].join('\n'));
  return failed.length ? EXIT_FAILED : EXIT_OK;
}

/**
 * Runs the processing here rather than queueing a job, so a retry works while the worker or Redis is
 * down. The requeue first makes the row PENDING, so a CLI killed halfway leaves it for the worker's sweep.
 */
export async function retryWebhook(hub: PaymentHub, id: number): Promise<RetryResult> {
  const webhook = await hub.webhooks.find(id);
  if (!webhook) return { id, status: 'NOT_RETRIED', error: `webhook ${id} does not exist` };
  if (webhook.provider !== 'card_gateway') {
    return { id, status: 'NOT_RETRIED', error: `webhook ${id} is a ${webhook.provider} webhook; only card-gateway webhooks are stored for processing` };
  }
  if (webhook.status !== 'FAILED') return { id, status: 'NOT_RETRIED', error: `webhook ${id} is ${webhook.status}; only a FAILED webhook can be retried` };
  if (!(await hub.webhooks.requeue(id))) return { id, status: 'NOT_RETRIED', error: `webhook ${id} changed while being retried; look at it again` };
  const outcome = await hub.processCardGatewayWebhook.execute(id, { operatorRetry: true });
  if (outcome.kind === 'done') return { id, status: outcome.status, note: outcome.note };
  if (outcome.kind === 'failed') return { id, status: 'FAILED', error: outcome.error };
  return awaitOtherAttempt(hub, id);
}

/** A worker claimed the webhook between the requeue and our claim: report what it ends with. */
async function awaitOtherAttempt(hub: PaymentHub, id: number): Promise<RetryResult> {
  const deadline = Date.now() + WORKER_WAIT_MS;
  for (;;) {
    const webhook = await hub.webhooks.find(id);
    if (webhook?.status === 'PROCESSED' || webhook?.status === 'SKIPPED') return { id, status: webhook.status, note: webhook.outcome ?? '' };
    if (webhook?.status === 'FAILED') return { id, status: 'FAILED', error: webhook.lastError ?? 'failed' };
    if (!webhook || Date.now() > deadline) return { id, status: 'FAILED', error: `webhook ${id} is being processed by another attempt; check it with webhooks show` };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export interface RetrySummary {
  total: number;
  processed: number;
  skipped: number;
  failed: number;
}

export function summarize(results: RetryResult[]): RetrySummary {
  const count = (status: RetryResult['status']) => results.filter((result) => result.status === status).length;
  return { total: results.length, processed: count('PROCESSED'), skipped: count('SKIPPED'), failed: count('FAILED') + count('NOT_RETRIED') };
}

export function describeSummary(summary: RetrySummary): string {
  if (summary.total === 0) return 'no FAILED webhooks to retry';
  return `retried ${summary.total} FAILED webhook${summary.total === 1 ? '' : 's'}: ${summary.processed} processed, ${summary.skipped} skipped, ${summary.failed} failed`;
}

export function describeRetry(result: RetryResult): string {
  switch (result.status) {
    case 'PROCESSED':
    case 'SKIPPED':
      return `webhook ${result.id}: ${result.status}${result.note ? ` (${result.note})` : ''}`;
    case 'FAILED':
      return `webhook ${result.id}: FAILED again: ${result.error}`;
    case 'NOT_RETRIED':
      return `webhook ${result.id}: not retried: ${result.error}`;
  }
}

function upper(value: unknown): string | undefined {
  return typeof value === 'string' ? value.toUpperCase() : undefined;
}

/** yargs `.check`: a message for the operator instead of a NaN reaching the database. */
export function positiveInteger(value: unknown, flag: string, max = Number.MAX_SAFE_INTEGER): true {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new Error(`${flag} must be a whole number from 1${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}`);
  }
  return true;
}
