import type { Argv } from 'yargs';
import type { Provider, WebhookStatus } from '../../../../entities';
import type { PaymentHub } from '../../composition/payment-hub';
import { loadConfigOrExit } from '../../../config';
import type { WebhookRecord } from '../../../data-access/webhook-repository';
import { formatOf, ITEM_FORMATS, LIST_FORMATS, outputOptions, printItem, printList, RESULT_FORMATS, type Field, type FieldSet, type Format } from './output';
import { action, CliError, confirm, EXIT_FAILED, EXIT_OK, listProgress, printJson, printText, requireYesOrTerminal, statusLine, withHub } from './runtime';

const STATUSES: WebhookStatus[] = ['PENDING', 'PROCESSED', 'SKIPPED', 'FAILED'];
const PROVIDERS: Provider[] = ['card_gateway', 'mobile_wallet'];
/** How long to wait for a worker that took the webhook between our requeue and our claim. */
const WORKER_WAIT_MS = 30_000;

export type RetryResult =
  | { id: number; status: 'PROCESSED' | 'SKIPPED'; note: string }
  /**
   * Failed again: its automatic retries go on (`next_attempt_at`, UTC), unless it has had all of them (null);
   * not there when another attempt still holds it.
   */
  | { id: number; status: 'FAILED'; error: string; next_attempt_at?: string | null }
  /** Not retried at all: unknown, not FAILED, or not a card-gateway webhook. */
  | { id: number; status: 'NOT_RETRIED'; error: string };

/** A stored webhook's fields, as SPEC names them; the raw body only where one webhook is shown. */
const WEBHOOK_FIELDS: Field<WebhookRecord>[] = [
  { name: 'id', header: 'ID', label: 'id', align: 'right', value: (w) => w.id },
  { name: 'provider', header: 'PROVIDER', label: 'provider', value: (w) => w.provider },
  { name: 'external_id', header: 'EXTERNAL ID', label: 'external id', maxWidth: 40, value: (w) => w.externalId },
  { name: 'event_type', header: 'EVENT', label: 'event', value: (w) => w.eventType },
  { name: 'status', header: 'STATUS', label: 'status', value: (w) => w.status },
  { name: 'attempts', header: 'ATTEMPTS', label: 'attempts', align: 'right', value: (w) => w.attempts },
  { name: 'last_error', header: 'LAST ERROR', label: 'last error', maxWidth: 60, value: (w) => w.lastError },
  { name: 'outcome', header: 'OUTCOME', label: 'outcome', maxWidth: 60, value: (w) => w.outcome },
  { name: 'next_attempt_at', header: 'NEXT ATTEMPT (UTC)', label: 'next attempt (UTC)', value: (w) => w.nextAttemptAt },
  { name: 'created_at', header: 'CREATED (UTC)', label: 'created (UTC)', value: (w) => w.createdAt },
  { name: 'updated_at', header: 'UPDATED (UTC)', label: 'updated (UTC)', value: (w) => w.updatedAt },
  { name: 'processed_at', header: 'PROCESSED (UTC)', label: 'processed (UTC)', value: (w) => w.processedAt },
];
const RAW_BODY: Field<WebhookRecord> = { name: 'raw_body', header: 'RAW BODY', label: 'raw body', value: (w) => w.rawBody.toString('utf8') };

export const WEBHOOK_LIST: FieldSet<WebhookRecord> = {
  fields: WEBHOOK_FIELDS,
  tableDefault: ['id', 'provider', 'event_type', 'status', 'attempts', 'created_at', 'external_id', 'last_error'],
};
export const WEBHOOK_SHOW: FieldSet<WebhookRecord> = {
  fields: [...WEBHOOK_FIELDS, RAW_BODY],
  // The body last and exactly as received, so it can be compared with the provider's own log.
  tableDefault: ['id', 'provider', 'external_id', 'event_type', 'status', 'attempts', 'outcome', 'last_error', 'next_attempt_at',
    'created_at', 'updated_at', 'processed_at', 'raw_body'],
};

const RETRY_WARNING = 'it reads the event back from the card gateway and may change orders, payments and subscriptions';

export function webhookCommands(y: Argv): Argv {
  return y
    .command('list', 'list received webhooks, newest first', (c) => outputOptions(c
      .option('status', { type: 'string', choices: STATUSES, coerce: upper, describe: 'only this status' })
      .option('provider', { type: 'string', choices: PROVIDERS, describe: 'only this provider' })
      .option('limit', { type: 'number', default: 50, describe: 'at most this many (1-1000)' })
      .check((argv) => positiveInteger(argv.limit, '--limit', 1000)), LIST_FORMATS, WEBHOOK_LIST),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const webhooks = await withHub(config, (hub) =>
        hub.webhooks.list({ status: argv.status as WebhookStatus | undefined, provider: argv.provider as Provider | undefined, limit: argv.limit }));
      printList(webhooks, WEBHOOK_LIST, argv, 'no webhooks');
    }))
    .command('show', 'show one webhook with its raw body', (c) => outputOptions(c
      .option('id', { type: 'number', demandOption: true, describe: 'webhook id' })
      .check((argv) => positiveInteger(argv.id, '--id')), ITEM_FORMATS, WEBHOOK_SHOW),
    action(async (argv) => {
      const config = loadConfigOrExit();
      const webhook = await withHub(config, (hub) => hub.webhooks.find(argv.id));
      if (!webhook) throw new CliError(`webhook ${argv.id} does not exist`);
      printItem(webhook, WEBHOOK_SHOW, argv, ['raw_body']);
    }))
    .command('retry', 'process a FAILED webhook again now (--id), or every FAILED one (--all-failed); asks first unless --yes', (c) => outputOptions(c
      .option('id', { type: 'number', describe: 'webhook id' })
      // No default: yargs counts a defaulted flag as given, which would trip the conflict with --id.
      .option('all-failed', { type: 'boolean', describe: 'retry every FAILED webhook, with a progress bar on a terminal' })
      .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'do not ask for confirmation (for unattended runs)' })
      .conflicts('id', 'all-failed')
      .check((argv) => {
        if (argv.id === undefined && !argv['all-failed']) throw new Error('name the webhook with --id=N, or pass --all-failed');
        return argv.id === undefined || positiveInteger(argv.id, '--id');
      }), RESULT_FORMATS),
    action(async (argv) => {
      requireYesOrTerminal(argv.yes, `webhooks retry asks before it runs (${RETRY_WARNING})`);
      const config = loadConfigOrExit();
      const format = formatOf(argv);
      return withHub(config, async (hub) => {
        if (argv.id !== undefined) return retrySingle(hub, argv.id, format, argv.yes);
        return retryAll(hub, format, argv.yes);
      });
    }))
    .demandCommand(1, 'name a webhooks command: list, show or retry');
}

async function retrySingle(hub: PaymentHub, id: number, format: Format, yes: boolean): Promise<number> {
  const webhook = await hub.webhooks.find(id);
  const refusal = notRetryable(webhook, id);
  if (refusal) throw new CliError(refusal.error);
  if (!yes && !(await confirm(`Retry webhook ${id} (${webhook!.eventType}, ${webhook!.attempts} attempts so far)? ${capitalized(RETRY_WARNING)}.`))) {
    return declined();
  }
  const result = await retryWebhook(hub, id);
  if (result.status === 'NOT_RETRIED') throw new CliError(result.error);
  if (format === 'json') printJson(result);
  else printText(describeRetry(result));
  return result.status === 'FAILED' ? EXIT_FAILED : EXIT_OK;
}

async function retryAll(hub: PaymentHub, format: Format, yes: boolean): Promise<number> {
  const ids = await hub.webhooks.failedIds();
  if (ids.length && !yes && !(await confirm(`Retry ${ids.length} FAILED webhook${ids.length === 1 ? '' : 's'}? For each, ${RETRY_WARNING}.`))) {
    return declined();
  }
  const results: RetryResult[] = [];
  // Progress goes to stderr: on a terminal a bar with the share done and the time left (not with --json, whose
  // document shares the screen), elsewhere a line every few seconds.
  const progress = ids.length ? listProgress('retrying FAILED webhooks', ids.length, format) : undefined;
  for (const id of ids) {
    results.push(await retryWebhook(hub, id));
    progress?.update(results.length);
  }
  progress?.finish();
  statusLine.finish();
  const summary = summarize(results);
  const failed = results.filter((result) => result.status === 'FAILED' || result.status === 'NOT_RETRIED');
  if (format === 'json') printJson({ ...summary, results });
  else printText([describeSummary(summary), ...failed.map(describeRetry)].join('\n'));
  return failed.length ? EXIT_FAILED : EXIT_OK;
}

function declined(): number {
  process.stderr.write('payment-hub: nothing retried\n');
  return EXIT_FAILED;
}

const capitalized = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/** Why a webhook cannot be retried, or null when it can. */
function notRetryable(webhook: WebhookRecord | null, id: number): Extract<RetryResult, { status: 'NOT_RETRIED' }> | null {
  if (!webhook) return { id, status: 'NOT_RETRIED', error: `webhook ${id} does not exist` };
  if (webhook.provider !== 'card_gateway') {
    return { id, status: 'NOT_RETRIED', error: `webhook ${id} is a ${webhook.provider} webhook; only card-gateway webhooks are stored for processing` };
  }
  if (webhook.status !== 'FAILED') return { id, status: 'NOT_RETRIED', error: `webhook ${id} is ${webhook.status}; only a FAILED webhook can be retried` };
  return null;
}

/**
 * Runs the processing here rather than queueing a job, so a retry works while the worker or Redis is
 * down. The requeue first makes the row PENDING, so a CLI killed halfway leaves it for the worker's sweep.
 * The retry is one of the webhook's automatic attempts: failed again, it keeps those it has left, the next
 * planned as after any failed attempt.
 */
export async function retryWebhook(hub: PaymentHub, id: number): Promise<RetryResult> {
  const refusal = notRetryable(await hub.webhooks.find(id), id);
  if (refusal) return refusal;
  if (!(await hub.webhooks.requeue(id))) return { id, status: 'NOT_RETRIED', error: `webhook ${id} changed while being retried; look at it again` };
  const outcome = await hub.processCardGatewayWebhook.execute(id);
  if (outcome.kind === 'done') return { id, status: outcome.status, note: outcome.note };
  if (outcome.kind === 'failed') return { id, status: 'FAILED', error: outcome.error, next_attempt_at: (await hub.webhooks.find(id))?.nextAttemptAt ?? null };
  return awaitOtherAttempt(hub, id);
}

/** A worker claimed the webhook between the requeue and our claim: report what it ends with. */
async function awaitOtherAttempt(hub: PaymentHub, id: number): Promise<RetryResult> {
  const deadline = Date.now() + WORKER_WAIT_MS;
  for (;;) {
    const webhook = await hub.webhooks.find(id);
    if (webhook?.status === 'PROCESSED' || webhook?.status === 'SKIPPED') return { id, status: webhook.status, note: webhook.outcome ?? '' };
    if (webhook?.status === 'FAILED') return { id, status: 'FAILED', error: webhook.lastError ?? 'failed', next_attempt_at: webhook.nextAttemptAt };
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
      if (result.next_attempt_at === undefined) return `webhook ${result.id}: FAILED again: ${result.error}`;
      return `webhook ${result.id}: FAILED again: ${result.error}; ${result.next_attempt_at ? `next automatic attempt at ${result.next_attempt_at} UTC` : 'no automatic attempt left'}`;
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
