import { spawn } from 'node:child_process';
import path from 'node:path';
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import { cell, formatAmount, formatMeta, parseList, progressBar, renderFields, renderTable } from '../../src/entry-points/cli/payment-hub/format';
import { renderCsv } from '../../src/entry-points/cli/payment-hub/output';
import { describeSummary, summarize } from '../../src/entry-points/cli/payment-hub/webhooks';
import { MOBILE_WALLET_EVENT_TYPES } from '../../src/payments/providers/events';
import { runCommand, type CommandRun } from '../support/cli-process';
import { cardGatewayDelivery, FakeCardGateway } from '../support/fake-card-gateway';
import { FakeMobileWallet } from '../support/fake-mobile-wallet';
import { createTestShop, type TestShop } from '../support/test-shop';

// The CLI runs as the operator runs it: the built bin script in a child process, with no stdin.
const ROOT = path.resolve(__dirname, '../../..');
const BIN = path.join(ROOT, 'bin/payment-hub');

let shop: TestShop;
let gateway: FakeCardGateway;
let wallet: FakeMobileWallet;

type Run = CommandRun;

function baseEnv(): Record<string, string> {
  return {
    DB_NAME: shop.dbName,
    DB_TABLE_PREFIX: shop.prefix,
    CARD_GATEWAY_API_URL: gateway.url,
    CARD_GATEWAY_API_KEY: gateway.apiKey,
    MOBILE_WALLET_API_URL: wallet.url,
    MOBILE_WALLET_CLIENT_ID: wallet.clientId,
    MOBILE_WALLET_CLIENT_SECRET: wallet.clientSecret,
    MOBILE_WALLET_SUBSCRIPTION_KEY: wallet.subscriptionKey,
    MOBILE_WALLET_MSN: wallet.merchantSerialNumber,
    MOBILE_WALLET_WEBHOOK_URL: 'https://shop.example.dk/payment-hub/v1/webhook/mobile_wallet',
  };
}

const collect = (command: string, args: string[], env: Record<string, string>): Promise<Run> => runCommand(command, args, { cwd: ROOT, env: { ...process.env, ...env } });

const cli = (args: string[], env: Record<string, string> = {}) => collect(process.execPath, [BIN, ...args], { ...baseEnv(), ...env });

/** The CLI on a pseudo-terminal (util-linux `script`), where stdout and stderr both reach the one terminal. */
const cliOnTerminal = (args: string[], env: Record<string, string> = {}) => collect('script', ['-qec', shellCommand(args), '/dev/null'], { ...baseEnv(), ...env });

const shellCommand = (args: string[]) => [process.execPath, BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');

/**
 * The CLI on a pseudo-terminal with one of its streams sent to a file instead: `stdout` redirected leaves
 * stderr on the terminal, and the other way round. The file's text comes back as `redirected`.
 */
async function cliOnTerminalRedirecting(stream: 'stdout' | 'stderr', args: string[]): Promise<Run & { redirected: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payment-hub-cli-'));
  const file = path.join(dir, 'out');
  const run = await collect('script', ['-qec', `${shellCommand(args)} ${stream === 'stdout' ? '>' : '2>'} '${file}'`, '/dev/null'], baseEnv());
  const redirected = fs.readFileSync(file, 'utf8');
  fs.rmSync(dir, { recursive: true, force: true });
  return { ...run, redirected };
}

/**
 * The CLI on a pseudo-terminal, answering prompts: each step waits until its text has appeared on the
 * screen (after the previous step's answer) and then types its keys.
 */
function cliAnswering(args: string[], steps: { when: string; type: string }[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', shellCommand(args), '/dev/null'], { cwd: ROOT, env: { ...process.env, ...baseEnv() }, stdio: ['pipe', 'pipe', 'pipe'] });
    const killer = setTimeout(() => child.kill(), 20_000);
    let stdout = '';
    let seenUpTo = 0;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const step = steps[0];
      const at = step ? stdout.indexOf(step.when, seenUpTo) : -1;
      if (at < 0) return;
      seenUpTo = at + step.when.length;
      steps.shift();
      child.stdin.write(step.type);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr: '' });
    });
  });
}

const q = async (sql: string, values: unknown[] = []) => (await shop.db.query(sql, values))[0] as any[];

async function seedWebhook(fields: { provider?: string; eventType: string; status: string; body: string | Buffer; externalId?: string; lastError?: string | null; attempts?: number }): Promise<number> {
  const [result] = await shop.db.query(
    `INSERT INTO ${shop.prefix}sidecar_webhooks (provider, external_id, event_type, status, raw_body, attempts, last_error, outcome, next_attempt_at, locked_until, created_at, updated_at, processed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NOW(3) - INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 HOUR, NULL)`,
    [fields.provider ?? 'card_gateway', fields.externalId ?? `evt-${Math.random().toString(36).slice(2)}`, fields.eventType, fields.status, fields.body,
      fields.attempts ?? 5, fields.lastError === undefined ? 'reading invoice: timeout' : fields.lastError],
  );
  return (result as { insertId: number }).insertId;
}

/** A FAILED invoice_settled webhook for an invoice the fake gateway knows as settled, linked to a new order; by default it has had its 5 automatic attempts. */
async function failedSettlement(handle: string, attempts = 5): Promise<{ id: number; orderId: number; body: string }> {
  const orderId = await shop.seeder.createOrder({ status: 'pending', total: '99.00', meta: { _reepay_order: handle } });
  gateway.setInvoice(handle, { state: 'settled', amount: 9900, customer: 'cust-cli' });
  const { body, payload } = cardGatewayDelivery({ event_type: 'invoice_settled', invoice: handle, customer: 'cust-cli' }, gateway.webhookSecret);
  const id = await seedWebhook({ eventType: 'invoice_settled', status: 'FAILED', body, externalId: String(payload.event_id), attempts });
  return { id, orderId, body: body.toString('utf8') };
}

const webhookRow = async (id: number) => (await q(`SELECT * FROM ${shop.prefix}sidecar_webhooks WHERE id = ?`, [id]))[0];
const paymentRow = async (handle: string) => (await q(`SELECT * FROM ${shop.prefix}sidecar_payments WHERE provider = 'card_gateway' AND external_id = ?`, [handle]))[0];

test.before(async () => {
  shop = await createTestShop('cli', {});
  gateway = new FakeCardGateway();
  wallet = new FakeMobileWallet();
  await Promise.all([gateway.start(), wallet.start()]);
});

test.after.always(async () => {
  await gateway?.stop();
  await wallet?.stop();
  await shop?.drop();
});

// ---------------------------------------------------------------------------------------------------------------
// Pure formatting

test('renderTable aligns columns, right-aligns numbers, flattens control characters and cuts long cells', (t) => {
  const table = renderTable(
    [{ header: 'ID', align: 'right' }, { header: 'STATUS' }, { header: 'ERROR', maxWidth: 12 }],
    [[7, 'FAILED', 'line one\nline two'], [1234, 'OK', null], [5, 'PENDING', '\x1b[31mred\x1b[0m']],
  );
  t.is(table, [
    '  ID  STATUS   ERROR',
    '   7  FAILED   line one li…',
    '1234  OK',
    '   5  PENDING  [31mred [0m',
  ].join('\n'));
  t.is(cell(undefined), '');
  t.is(renderTable([{ header: 'A' }, { header: 'B' }], []), 'A  B');
});

test('renderFields pads the keys to one width', (t) => {
  t.is(renderFields([['id', 3], ['last error', null], ['status', 'FAILED']]), 'id:         3\nlast error:\nstatus:     FAILED');
});

test('progressBar fills in proportion and shows the count', (t) => {
  t.is(progressBar(0, 4, 8), '[--------] 0/4');
  t.is(progressBar(2, 4, 8), '[####----] 2/4');
  t.is(progressBar(3, 40, 10), '[----------] 3/40');
  t.is(progressBar(12, 40, 10), '[###-------] 12/40');
  t.is(progressBar(4, 4, 8), '[########] 4/4');
  t.is(progressBar(0, 0, 4), '[####] 0/0');
});

test('formatAmount uses the currency decimals; formatMeta lists the non-empty meta sorted', (t) => {
  t.is(formatAmount(9900, 'DKK'), '99.00 DKK');
  t.is(formatAmount(5, 'EUR'), '0.05 EUR');
  t.is(formatAmount(1500, 'JPY'), '1500 JPY');
  t.is(formatAmount(-250, null), '-2.50');
  t.is(formatAmount(null, 'DKK'), '');
  t.is(formatMeta({ failure_state: 'hard_declined', failure_code: 'insufficient_funds', failure_description: '' }),
    'failure_code=insufficient_funds, failure_state=hard_declined');
  t.deepEqual(parseList('a, b,,a ,c'), ['a', 'b', 'c']);
  t.deepEqual(parseList(['a,b', 'c']), ['a', 'b', 'c']);
});

test('renderCsv writes a header row and quotes as RFC 4180: commas, double quotes and line breaks; null is empty, objects are JSON', (t) => {
  t.is(renderCsv(['id', 'note', 'meta'], [[1, 'plain', null], [2, 'a, b', { k: 'v' }], [3, 'say "hi"', 'x'], [4, 'two\nlines', 'cr\r'], [5, '', undefined]]),
    'id,note,meta\n1,plain,\n2,"a, b","{""k"":""v""}"\n3,"say ""hi""",x\n4,"two\nlines","cr\r"\n5,,\n');
  t.is(renderCsv(['id'], []), 'id\n');
});

test('the retry summary counts each outcome', (t) => {
  const summary = summarize([
    { id: 1, status: 'PROCESSED', note: 'payment CAPTURED' }, { id: 2, status: 'SKIPPED', note: '' },
    { id: 3, status: 'FAILED', error: 'timeout' }, { id: 4, status: 'NOT_RETRIED', error: 'gone' },
  ]);
  t.deepEqual(summary, { total: 4, processed: 1, skipped: 1, failed: 2 });
  t.is(describeSummary(summary), 'retried 4 FAILED webhooks: 1 processed, 1 skipped, 2 failed');
  t.is(describeSummary(summarize([])), 'no FAILED webhooks to retry');
});

// ---------------------------------------------------------------------------------------------------------------
// The built CLI against a real database. Serial: `--all-failed` retries every FAILED row in the shop.

test('--version prints the version of this release (package.json) and exits 0', async (t) => {
  const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
  const run = await cli(['--version']);
  t.is(run.code, 0, run.stderr);
  t.is(run.stdout, `${version}\n`);
});

test.serial('Usage errors exit 2 with the message on stderr and nothing on stdout', async (t) => {
  for (const args of [['bogus'], ['webhooks', 'show'], ['webhooks', 'show', '--id=abc'], ['webhooks', 'retry'], ['webhooks', 'list', '--status=NOPE'],
    ['webhooks', 'retry', '--id=1', '--all-failed'], ['payments', 'list'], ['webhooks', 'list', '--bogus-flag']]) {
    const run = await cli(args);
    t.is(run.code, 2, args.join(' '));
    t.is(run.stdout, '', args.join(' '));
    t.regex(run.stderr, /^payment-hub: \S/, args.join(' '));
  }
  t.regex((await cli(['webhooks', 'show'])).stderr, /Missing required argument: id/);
  t.regex((await cli(['bogus'])).stderr, /Unknown argument: bogus/);
  // An unknown option is named once, as typed (not also in yargs' camel case), with the help of the command it was given to.
  t.is((await cli(['webhooks', 'list', '--bogus-flag'])).stderr, 'payment-hub: Unknown argument: --bogus-flag\nRun payment-hub webhooks list --help for usage.\n');
  t.is((await cli(['webhooks', 'list', '--bogus-flag=1', '--other-thing', '-q'])).stderr,
    'payment-hub: Unknown arguments: --bogus-flag, --other-thing, -q\nRun payment-hub webhooks list --help for usage.\n');
  t.is((await cli(['bogus'])).stderr, 'payment-hub: Unknown argument: bogus\nRun payment-hub --help for usage.\n');
  t.is((await cli(['webhooks', 'retry'])).stderr, 'payment-hub: name the webhook with --id=N, or pass --all-failed\nRun payment-hub webhooks retry --help for usage.\n');
});

test.serial('webhooks list prints an aligned table, filters, and with --json one JSON document', async (t) => {
  const processed = await seedWebhook({ eventType: 'invoice_created', status: 'PROCESSED', body: '{"x":1}', lastError: null });
  const skipped = await seedWebhook({ eventType: 'customer_payment_method_added', status: 'SKIPPED', body: '{"x":2}', lastError: null });
  const wallet1 = await seedWebhook({ provider: 'mobile_wallet', eventType: 'recurring.charge-captured.v1', status: 'PROCESSED', body: '{}', lastError: null });

  const human = await cli(['webhooks', 'list']);
  t.is(human.code, 0, human.stderr);
  t.is(human.stderr, '');
  const lines = human.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^\s*ID\s+PROVIDER\s+EVENT\s+STATUS\s+ATTEMPTS\s+CREATED \(UTC\)\s+EXTERNAL ID\s+LAST ERROR$/);
  const statusColumn = lines[0].indexOf('STATUS');
  for (const line of lines.slice(1)) t.regex(line.slice(statusColumn), /^(PROCESSED|SKIPPED|FAILED|PENDING)\b/);

  const json = await cli(['webhooks', 'list', '--json', '--status', 'processed', '--provider', 'card_gateway']);
  t.is(json.code, 0, json.stderr);
  const listed = JSON.parse(json.stdout);
  t.deepEqual(listed.map((w: { id: number }) => w.id), [processed]);
  t.deepEqual(Object.keys(listed[0]), ['id', 'provider', 'external_id', 'event_type', 'status', 'attempts', 'last_error', 'outcome', 'next_attempt_at',
    'created_at', 'updated_at', 'processed_at']);
  t.is(listed[0].event_type, 'invoice_created');

  const limited = JSON.parse((await cli(['webhooks', 'list', '--json', '--limit=2'])).stdout);
  t.deepEqual(limited.map((w: { id: number }) => w.id), [wallet1, skipped]);
});

test.serial('webhooks show prints the fields and the raw body as text; --json carries the body as a string', async (t) => {
  const body = '{"id":"d1","event_id":"e1","event_type":"invoice_settled","invoice":"inv-show"}';
  const id = await seedWebhook({ eventType: 'invoice_settled', status: 'FAILED', body, lastError: 'reading invoice inv-show: HTTP 500\nretry later' });

  const human = await cli(['webhooks', 'show', `--id=${id}`]);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, new RegExp(`^id:\\s+${id}$`, 'm'));
  t.regex(human.stdout, /^status:\s+FAILED$/m);
  t.regex(human.stdout, /^last error:\s+reading invoice inv-show: HTTP 500 retry later$/m);
  t.true(human.stdout.endsWith(`raw body:\n${body}\n`));

  const json = await cli(['webhooks', 'show', '--id', String(id), '--json']);
  t.is(json.code, 0, json.stderr);
  const shown = JSON.parse(json.stdout);
  t.is(shown.id, id);
  t.is(shown.raw_body, body);
  t.is(shown.status, 'FAILED');
  t.is(shown.event_type, 'invoice_settled');
  t.is(shown.last_error, 'reading invoice inv-show: HTTP 500\nretry later');
  t.false(Object.keys(shown).some((key) => /[A-Z]/.test(key)), 'snake_case keys only');

  const missing = await cli(['webhooks', 'show', '--id=999999']);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /webhook 999999 does not exist/);
  // The webhook stays as it was: show reads only.
  t.is((await webhookRow(id)).status, 'FAILED');
  await q(`UPDATE ${shop.prefix}sidecar_webhooks SET status = 'SKIPPED' WHERE id = ?`, [id]); // out of the way of --all-failed
});

test.serial('webhooks retry --id turns a FAILED invoice_settled webhook PROCESSED and captures the payment, even without the worker', async (t) => {
  const { id, orderId } = await failedSettlement('inv-cli-1');
  const run = await cli(['webhooks', 'retry', `--id=${id}`, '--yes']);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, new RegExp(`^webhook ${id}: PROCESSED`));
  const row = await webhookRow(id);
  t.is(row.status, 'PROCESSED');
  t.is(row.last_error, null);
  const payment = await paymentRow('inv-cli-1');
  t.is(payment.status, 'CAPTURED');
  t.is(Number(payment.order_id), orderId);
  t.is(Number(payment.amount_minor), 9900);

  // Once processed it is no longer retryable.
  const again = await cli(['webhooks', 'retry', `--id=${id}`, '--yes']);
  t.is(again.code, 1);
  t.is(again.stdout, '');
  t.regex(again.stderr, new RegExp(`webhook ${id} is PROCESSED; only a FAILED webhook can be retried`));
});

test.serial('webhooks retry of a webhook that is not FAILED, or does not exist, exits 1 and changes nothing', async (t) => {
  const pending = await seedWebhook({ eventType: 'invoice_settled', status: 'PENDING', body: '{}', lastError: null, attempts: 0 });
  const run = await cli(['webhooks', 'retry', '--id', String(pending), '-y']);
  t.is(run.code, 1);
  t.regex(run.stderr, /is PENDING; only a FAILED webhook can be retried/);
  const row = await webhookRow(pending);
  t.is(row.status, 'PENDING');
  t.is(Number(row.attempts), 0);
  await q(`UPDATE ${shop.prefix}sidecar_webhooks SET status = 'SKIPPED' WHERE id = ?`, [pending]);

  const missing = await cli(['webhooks', 'retry', '--id=987654', '--yes']);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /webhook 987654 does not exist/);
});

test.serial('webhooks retry --id that fails again prints the error, exits 1 and leaves it FAILED; after its last automatic attempt none is planned', async (t) => {
  const { id } = await failedSettlement('inv-cli-fail');
  const run = await cli(['webhooks', 'retry', `--id=${id}`, '--yes', '--json'], { CARD_GATEWAY_API_KEY: 'priv_wrong_key' });
  t.is(run.code, 1);
  t.is(run.stderr, '', 'no log line: the result says it');
  const result = JSON.parse(run.stdout);
  t.is(result.id, id);
  t.is(result.status, 'FAILED');
  t.regex(result.error, /inv-cli-fail/);
  t.is(result.next_attempt_at, null);
  const row = await webhookRow(id);
  t.is(row.status, 'FAILED');
  t.is(Number(row.attempts), 6);
  t.is(row.next_attempt_at, null, 'it had had its 5 automatic attempts');
  t.is(await paymentRow('inv-cli-fail'), undefined);
});

test.serial('webhooks retry --id of a webhook with automatic attempts left: failed again, it keeps the rest of them on their schedule; done, none is left', async (t) => {
  // Failed once; its automatic retry planned in 30 s.
  const { id } = await failedSettlement('inv-cli-keep', 1);
  await q(`UPDATE ${shop.prefix}sidecar_webhooks SET next_attempt_at = NOW(3) + INTERVAL 30 SECOND WHERE id = ?`, [id]);
  const failed = await cli(['webhooks', 'retry', `--id=${id}`, '--yes'], { CARD_GATEWAY_API_KEY: 'priv_wrong_key' });
  t.is(failed.code, 1);
  const row = await webhookRow(id);
  t.is(row.status, 'FAILED');
  t.is(Number(row.attempts), 2, 'the retry counts as one of its attempts');
  // As after a second automatic attempt: the third in 60 s.
  const [[{ inSeconds }]] = await shop.db.query(`SELECT TIMESTAMPDIFF(SECOND, NOW(3), next_attempt_at) AS inSeconds FROM ${shop.prefix}sidecar_webhooks WHERE id = ?`, [id]) as any[];
  t.true(Number(inSeconds) > 45 && Number(inSeconds) <= 60, String(inSeconds));
  t.is(failed.stdout, `webhook ${id}: FAILED again: ${row.last_error}; next automatic attempt at ${row.next_attempt_at} UTC\n`);

  const json = await cli(['webhooks', 'retry', `--id=${id}`, '--yes', '--json'], { CARD_GATEWAY_API_KEY: 'priv_wrong_key' });
  t.is(json.code, 1);
  t.is(JSON.parse(json.stdout).next_attempt_at, (await webhookRow(id)).next_attempt_at);
  t.is(Number((await webhookRow(id)).attempts), 3);

  const done = await cli(['webhooks', 'retry', `--id=${id}`, '--yes']);
  t.is(done.code, 0, done.stderr);
  const processed = await webhookRow(id);
  t.is(processed.status, 'PROCESSED');
  t.is(processed.next_attempt_at, null);
  t.is((await paymentRow('inv-cli-keep')).status, 'CAPTURED');
});

test.serial('webhooks retry on a terminal shows its result alone, no log line among it; --verbose adds the service\'s log lines on stderr', async (t) => {
  const { id } = await failedSettlement('inv-cli-quiet');
  const run = await cliOnTerminal(['webhooks', 'retry', `--id=${id}`, '--yes'], { CARD_GATEWAY_API_KEY: 'priv_wrong_key' });
  t.is(run.code, 1);
  const screen = run.stdout.replace(/\r\n/g, '\n');
  t.regex(screen, new RegExp(`^webhook ${id}: FAILED again: .*inv-cli-quiet.*; no automatic attempt left\n$`));

  const verbose = await cli(['webhooks', 'retry', `--id=${id}`, '--yes', '--verbose'], { CARD_GATEWAY_API_KEY: 'priv_wrong_key' });
  t.is(verbose.code, 1);
  t.regex(verbose.stdout, new RegExp(`^webhook ${id}: FAILED again: `));
  const line = JSON.parse(verbose.stderr.trim().split('\n').find((one) => one.includes('webhook_failed'))!);
  t.like(line, { level: 'warn', event: 'webhook_failed', id, willRetry: false });
  await q(`UPDATE ${shop.prefix}sidecar_webhooks SET status = 'SKIPPED' WHERE id = ?`, [id]); // out of the way of --all-failed
});

test.serial('webhooks retry without --yes and without a terminal exits 2 at once, naming --yes, and retries nothing', async (t) => {
  const { id } = await failedSettlement('inv-no-tty');
  for (const args of [['webhooks', 'retry', `--id=${id}`], ['webhooks', 'retry', '--all-failed'], ['webhooks', 'retry', '--all-failed', '--json']]) {
    const started = Date.now();
    const run = await cli(args);
    t.is(run.code, 2, args.join(' '));
    t.is(run.stdout, '', args.join(' '));
    t.regex(run.stderr, /^payment-hub: webhooks retry asks before it runs .*stdin is not a terminal, so nothing can be asked: pass --yes to run it unattended\n/, args.join(' '));
    t.true(Date.now() - started < 15_000, 'it does not wait for an answer');
  }
  const row = await webhookRow(id);
  t.is(row.status, 'FAILED');
  t.is(Number(row.attempts), 5);
  t.is(await paymentRow('inv-no-tty'), undefined, 'nothing was captured');
  t.is(gateway.requests.filter((request) => request.path.includes('inv-no-tty')).length, 0, 'the gateway was not asked');
});

test.serial('webhooks retry on a terminal asks first: no leaves the webhook FAILED (exit 1), yes retries it', async (t) => {
  const { id } = await failedSettlement('inv-ask');
  const declined = await cliAnswering(['webhooks', 'retry', `--id=${id}`], [{ when: '(y/N)', type: 'n\r' }]);
  t.is(declined.code, 1, declined.stdout);
  t.regex(declined.stdout, new RegExp(`Retry webhook ${id} \\(invoice_settled, 5 attempts so far\\)\\? It reads the event back`)); // the terminal wraps the rest
  t.regex(declined.stdout, /payment-hub: nothing retried/);
  t.is((await webhookRow(id)).status, 'FAILED');
  t.is(await paymentRow('inv-ask'), undefined);

  const accepted = await cliAnswering(['webhooks', 'retry', `--id=${id}`], [{ when: '(y/N)', type: 'y\r' }]);
  t.is(accepted.code, 0, accepted.stdout);
  t.regex(accepted.stdout, new RegExp(`webhook ${id}: PROCESSED`));
  t.is((await webhookRow(id)).status, 'PROCESSED');
  t.is((await paymentRow('inv-ask')).status, 'CAPTURED');
});

test.serial('webhooks retry --all-failed on a terminal asks with the count, and no retries none of them', async (t) => {
  const seeded = await Promise.all(['inv-ask-all-1', 'inv-ask-all-2'].map((handle) => failedSettlement(handle)));
  const failed = (await q(`SELECT id FROM ${shop.prefix}sidecar_webhooks WHERE status = 'FAILED'`)).length;
  const run = await cliAnswering(['webhooks', 'retry', '--all-failed'], [{ when: '(y/N)', type: '\r' }]); // Enter takes the default: no
  t.is(run.code, 1, run.stdout);
  t.regex(run.stdout, new RegExp(`Retry ${failed} FAILED webhooks\\? For each, it reads the event back`));
  t.regex(run.stdout, /nothing retried/);
  for (const { id } of seeded) t.is((await webhookRow(id)).status, 'FAILED');
});

test.serial('webhooks retry --all-failed retries every FAILED webhook; no progress bar without a terminal, but a summary', async (t) => {
  const seeded = await Promise.all(['inv-all-1', 'inv-all-2', 'inv-all-3'].map((handle) => failedSettlement(handle)));
  const failedBefore = (await q(`SELECT id FROM ${shop.prefix}sidecar_webhooks WHERE status = 'FAILED'`)).length;
  t.true(failedBefore >= 3);

  const run = await cli(['webhooks', 'retry', '--all-failed', '--yes']);
  t.is(run.code, 0, run.stderr);
  t.is(run.stdout, `retried ${failedBefore} FAILED webhooks: ${failedBefore} processed, 0 skipped, 0 failed\n`);
  t.notRegex(run.stderr, /\[[#-]+\]/);
  for (const { id } of seeded) t.is((await webhookRow(id)).status, 'PROCESSED');
  for (const handle of ['inv-all-1', 'inv-all-2', 'inv-all-3']) t.is((await paymentRow(handle)).status, 'CAPTURED');

  const none = await cli(['webhooks', 'retry', '--all-failed', '--yes', '--format=json']);
  t.is(none.code, 0, none.stderr);
  t.deepEqual(JSON.parse(none.stdout), { total: 0, processed: 0, skipped: 0, failed: 0, results: [] });
});

test.serial('webhooks retry --all-failed draws the progress bar on a terminal, and --json suppresses it', async (t) => {
  await Promise.all(['inv-tty-1', 'inv-tty-2'].map((handle) => failedSettlement(handle)));
  // A mobile-wallet row is never processed from the table, so it counts as not retried.
  const walletRow = await seedWebhook({ provider: 'mobile_wallet', eventType: 'recurring.charge-failed.v1', status: 'FAILED', body: '{"eventType":"recurring.charge-failed.v1"}' });

  const run = await cliOnTerminal(['webhooks', 'retry', '--all-failed', '--yes']);
  t.is(run.code, 1, run.stdout);
  const screen = run.stdout.replace(/\r\n/g, '\n');
  t.regex(screen, /\[-{30}\] 0\/3/);
  t.regex(screen, /\[#{10}-{20}\] 1\/3/);
  t.regex(screen, /\[#{30}\] 3\/3\n/);
  t.regex(screen, /retried 3 FAILED webhooks: 2 processed, 0 skipped, 1 failed\n/);
  t.regex(screen, new RegExp(`webhook ${walletRow}: not retried: webhook ${walletRow} is a mobile_wallet webhook`));
  t.is((await webhookRow(walletRow)).status, 'FAILED');

  const json = await cliOnTerminal(['webhooks', 'retry', '--all-failed', '--yes', '--json']);
  t.is(json.code, 1);
  const screenJson = json.stdout.replace(/\r\n/g, '\n');
  t.notRegex(screenJson, /\[[#-]+\] \d/);
  const result = JSON.parse(screenJson);
  t.like(result, { total: 1, processed: 0, skipped: 0, failed: 1 });
  t.is(result.results[0].status, 'NOT_RETRIED');
  await q(`DELETE FROM ${shop.prefix}sidecar_webhooks WHERE id = ?`, [walletRow]);
});

test.serial('Off a terminal --all-failed writes a plain progress line every PROGRESS_INTERVAL_SECONDS, also while one webhook takes longer', async (t) => {
  await Promise.all(['inv-lines-1', 'inv-lines-2'].map((handle) => failedSettlement(handle)));
  gateway.latencyMs = 700;
  let run: Run;
  try {
    run = await cli(['webhooks', 'retry', '--all-failed', '--yes'], { PROGRESS_INTERVAL_SECONDS: '0.2' });
  } finally {
    gateway.latencyMs = 0;
  }
  t.is(run.code, 0, run.stderr);
  t.is(run.stdout, 'retried 2 FAILED webhooks: 2 processed, 0 skipped, 0 failed\n');
  t.false(run.stderr.includes('\r'), 'plain lines, nothing redrawn');
  const lines = run.stderr.split('\n').filter(Boolean);
  t.true(lines.every((line) => line.startsWith('retrying FAILED webhooks: ')), run.stderr);
  // Lines while the first webhook is still being retried: none finished, so the time left is not known yet.
  t.true(lines.filter((line) => line === 'retrying FAILED webhooks: 0.0% done, time left not known yet, 0 of 2').length >= 2, run.stderr);
  t.true(lines.some((line) => /^retrying FAILED webhooks: 50\.0% done, about [\d.]+ (ms|s) left, 1 of 2$/.test(line)), run.stderr);
  t.regex(lines[lines.length - 1], /^retrying FAILED webhooks: 100% done in [\d.]+ (ms|s), 2 of 2$/);
});

test.serial('the progress bar goes to stderr, and only when stderr is a terminal', async (t) => {
  await Promise.all(['inv-stderr-1', 'inv-stderr-2'].map((handle) => failedSettlement(handle)));
  const stdoutToFile = await cliOnTerminalRedirecting('stdout', ['webhooks', 'retry', '--all-failed', '--yes']);
  t.is(stdoutToFile.code, 0, stdoutToFile.stdout);
  t.regex(stdoutToFile.stdout.replace(/\r\n/g, '\n'), /\[#{30}\] 2\/2\n/, 'the bar is drawn on the terminal that stderr is');
  t.is(stdoutToFile.redirected, 'retried 2 FAILED webhooks: 2 processed, 0 skipped, 0 failed\n', 'stdout has the summary and nothing else');

  await failedSettlement('inv-stderr-3');
  const stderrToFile = await cliOnTerminalRedirecting('stderr', ['webhooks', 'retry', '--all-failed', '--yes']);
  t.is(stderrToFile.code, 0, stderrToFile.redirected);
  t.is(stderrToFile.stdout.replace(/\r\n/g, '\n'), 'retried 1 FAILED webhook: 1 processed, 0 skipped, 0 failed\n');
  t.notRegex(stderrToFile.redirected, /\[[#-]+\]/, 'no bar when stderr is not a terminal, even with stdout on one');
});

test.serial('mobile_wallet webhooks register runs unattended from flags, stores the secret and never prints it', async (t) => {
  const url = 'https://shop.example.dk/payment-hub/v1/webhook/mobile_wallet?site=1';
  const events = ['recurring.charge-captured.v1', 'recurring.charge-failed.v1'];
  const run = await cli(['mobile_wallet', 'webhooks', 'register', `--url=${url}`, `--events=${events.join(',')}`, '--yes']);
  t.is(run.code, 0, run.stderr);
  const match = /^registered mobile wallet webhook (\S+) for (\S+) \(2 events\)\n$/.exec(run.stdout);
  t.truthy(match, run.stdout);
  const registrationId = match![1];
  t.is(match![2], url);
  const secret = wallet.webhookSecret(registrationId);
  t.truthy(secret);
  t.false(run.stdout.includes(secret!));
  t.false(run.stderr.includes(secret!));

  const [row] = await q(`SELECT * FROM ${shop.prefix}sidecar_mobile_wallet_webhooks WHERE registration_id = ?`, [registrationId]);
  t.is(row.url, url);
  t.deepEqual(JSON.parse(row.events), events);
  t.is(row.secret, secret);
  const [request] = wallet.requestsTo('POST', '/webhooks/v1/webhooks');
  t.deepEqual(request.json, { url, events });
});

test.serial('mobile_wallet webhooks register --yes takes MOBILE_WALLET_WEBHOOK_URL and every supported event; --json prints one document', async (t) => {
  const run = await cli(['mobile_wallet', 'webhooks', 'register', '--yes', '--json']);
  t.is(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  t.deepEqual(Object.keys(result), ['registration_id', 'url', 'events']);
  t.is(result.url, baseEnv().MOBILE_WALLET_WEBHOOK_URL);
  t.deepEqual(result.events, [...MOBILE_WALLET_EVENT_TYPES]);
  const [row] = await q(`SELECT * FROM ${shop.prefix}sidecar_mobile_wallet_webhooks WHERE registration_id = ?`, [result.registration_id]);
  t.is(row.secret, wallet.webhookSecret(result.registration_id));
  t.false(run.stdout.includes(row.secret));
});

test.serial('mobile_wallet webhooks register asks on a terminal: URL (default MOBILE_WALLET_WEBHOOK_URL), events (all ticked), confirmation', async (t) => {
  const first = MOBILE_WALLET_EVENT_TYPES[0];
  const run = await cliAnswering(['mobile_wallet', 'webhooks', 'register'], [
    { when: 'Webhook URL the mobile wallet should call', type: '\r' },
    { when: 'Events to receive', type: ' ' }, // untick the first event
    { when: `◯ ${first}`, type: '\r' },
    { when: '(Y/n)', type: 'y\r' },
  ]);
  t.is(run.code, 0, run.stdout);
  const registrationId = /registered mobile wallet webhook (\S+) for/.exec(run.stdout)?.[1];
  t.truthy(registrationId, run.stdout);
  const [row] = await q(`SELECT * FROM ${shop.prefix}sidecar_mobile_wallet_webhooks WHERE registration_id = ?`, [registrationId]);
  t.is(row.url, baseEnv().MOBILE_WALLET_WEBHOOK_URL);
  t.deepEqual(JSON.parse(row.events), MOBILE_WALLET_EVENT_TYPES.filter((event) => event !== first));
  t.false(run.stdout.includes(row.secret));
});

test.serial('mobile_wallet webhooks register without answers and without a terminal, or with a bad event, is a usage error', async (t) => {
  const before = (await q(`SELECT id FROM ${shop.prefix}sidecar_mobile_wallet_webhooks`)).length;
  const unattended = await cli(['mobile_wallet', 'webhooks', 'register', '--url=https://shop.example.dk/hook']);
  t.is(unattended.code, 2);
  t.regex(unattended.stderr, /stdin is not a terminal/);
  const badEvent = await cli(['mobile_wallet', 'webhooks', 'register', '--events=recurring.charge-exploded.v1', '--yes']);
  t.is(badEvent.code, 2);
  t.regex(badEvent.stderr, /unsupported event recurring\.charge-exploded\.v1/);
  const noUrl = await cli(['mobile_wallet', 'webhooks', 'register', '--yes'], { MOBILE_WALLET_WEBHOOK_URL: '' });
  t.is(noUrl.code, 2);
  t.regex(noUrl.stderr, /no webhook URL/);
  const refused = await cli(['mobile_wallet', 'webhooks', 'register', '--yes'], { MOBILE_WALLET_CLIENT_SECRET: 'wrong' });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /did not register the webhook/);
  t.is((await q(`SELECT id FROM ${shop.prefix}sidecar_mobile_wallet_webhooks`)).length, before);
});

/** The order `payments list` is shown with two payments, and one with none. */
let paymentsOrder: number;
let orderWithoutPayments: number;

test.serial("payments list --order shows the order's payments with their failure meta", async (t) => {
  const orderId = paymentsOrder = await shop.seeder.createOrder({ status: 'processing', total: '222.45' });
  orderWithoutPayments = await shop.seeder.createOrder({ status: 'processing', total: '10.00' });
  const insert = async (externalId: string, status: string, amount: number) => {
    const [result] = await shop.db.query(
      `INSERT INTO ${shop.prefix}sidecar_payments (provider, external_id, status, order_id, agreement_id, amount_minor, currency, created_at, updated_at)
       VALUES ('card_gateway', ?, ?, ?, NULL, ?, 'DKK', '2026-03-01 10:00:00.000', '2026-03-01 10:05:00.000')`, [externalId, status, orderId, amount]);
    return (result as { insertId: number }).insertId;
  };
  const failed = await insert('inv-pay-1', 'FAILED', 9900);
  const captured = await insert('inv-pay-2', 'CAPTURED', 12345);
  for (const [key, value] of [['failure_code', 'insufficient_funds'], ['failure_description', 'Insufficient funds'], ['failure_state', 'soft_declined']]) {
    await shop.db.query(`INSERT INTO ${shop.prefix}sidecar_payment_meta (payment_id, meta_key, meta_value) VALUES (?, ?, ?)`, [failed, key, value]);
  }

  const json = await cli(['payments', 'list', `--order=${orderId}`, '--json']);
  t.is(json.code, 0, json.stderr);
  const payments = JSON.parse(json.stdout);
  t.deepEqual(payments.map((p: { id: number }) => p.id), [failed, captured]);
  t.deepEqual(payments[0].meta, { failure_code: 'insufficient_funds', failure_description: 'Insufficient funds', failure_state: 'soft_declined' });
  t.deepEqual(payments[1], {
    id: captured, provider: 'card_gateway', external_id: 'inv-pay-2', status: 'CAPTURED', order_id: orderId, agreement_id: null, amount_minor: 12345,
    currency: 'DKK', created_at: '2026-03-01 10:00:00.000', updated_at: '2026-03-01 10:05:00.000', meta: {},
  });

  const human = await cli(['payments', 'list', '--order', String(orderId)]);
  t.is(human.code, 0, human.stderr);
  const lines = human.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^\s*ID\s+PROVIDER\s+EXTERNAL ID\s+STATUS\s+AMOUNT\s+CREATED \(UTC\)\s+UPDATED \(UTC\)\s+META$/);
  t.regex(lines[1], /inv-pay-1\s+FAILED\s+99\.00 DKK\s+2026-03-01 10:00:00\.000\s+2026-03-01 10:05:00\.000\s+failure_code=insufficient_funds, failure_description=Insufficient funds, failure_state=soft_declined$/);
  t.regex(lines[2], /inv-pay-2\s+CAPTURED\s+123\.45 DKK/);
  t.is(lines[1].indexOf('99.00') + '99.00 DKK'.length, lines[2].indexOf('123.45') + '123.45 DKK'.length); // amounts right-aligned

  const none = await cli(['payments', 'list', `--order=${orderWithoutPayments}`]);
  t.is(none.code, 0);
  t.is(none.stdout, `no payments for order ${orderWithoutPayments}\n`);
  t.deepEqual(JSON.parse((await cli(['payments', 'list', `--order=${orderWithoutPayments}`, '--json'])).stdout), []);

  // As reconcile --order says: an order that does not exist is not an order without payments.
  for (const format of [[], ['--json'], ['--format=count']]) {
    const missing = await cli(['payments', 'list', '--order=999999', ...format]);
    t.is(missing.code, 1, format.join(' '));
    t.is(missing.stdout, '');
    t.is(missing.stderr, 'payment-hub: order 999999 does not exist\n');
  }
});

test.serial('retries list shows the dunning attempts, filtered by status', async (t) => {
  const insert = (orderId: number, attempt: number, status: string, scheduledAt: string) => shop.db.query(
    `INSERT INTO ${shop.prefix}sidecar_payment_retries (order_id, subscription_id, payment_id, attempt, status, scheduled_at, idempotency_key, result, created_at, updated_at)
     VALUES (?, 900, 1, ?, ?, ?, ?, NULL, NOW(3), NOW(3))`, [orderId, attempt, status, scheduledAt, `retry-${orderId}-${attempt}`]);
  await insert(801, 1, 'FAILED', '2026-04-01 12:00:00.000');
  await insert(801, 2, 'PENDING', '2026-04-02 12:00:00.000');
  await insert(802, 1, 'PENDING', '2026-04-01 18:00:00.000');

  const json = await cli(['retries', 'list', '--status=pending', '--json']);
  t.is(json.code, 0, json.stderr);
  const retries = JSON.parse(json.stdout);
  t.deepEqual(retries.map((r: { order_id: number; attempt: number }) => [r.order_id, r.attempt]), [[802, 1], [801, 2]]);
  t.deepEqual(Object.keys(retries[0]), ['id', 'order_id', 'subscription_id', 'payment_id', 'attempt', 'plan', 'status', 'scheduled_at', 'idempotency_key', 'result']);
  t.is(retries[0].plan, 'soft', 'an attempt planned before plans existed is on the dunning plan');
  t.is(retries[0].idempotency_key, 'retry-802-1');

  const human = await cli(['retries', 'list']);
  t.is(human.code, 0, human.stderr);
  const lines = human.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^\s*ID\s+ORDER\s+SUBSCRIPTION\s+PAYMENT\s+ATTEMPT\s+PLAN\s+STATUS\s+SCHEDULED \(UTC\)\s+RESULT$/);
  t.is(lines.length, 4);
  t.regex(lines[1], /801\s+900\s+1\s+1\s+soft\s+FAILED\s+2026-04-01 12:00:00\.000$/);
});

// ---------------------------------------------------------------------------------------------------------------
// Output formats, as wp-cli has them: --format=table|json|csv|ids|count, --fields, --json = --format=json

test.serial('webhooks list --format=csv|ids|count and --fields pick the shape and the fields, with the snake_case names', async (t) => {
  const older = await seedWebhook({ eventType: 'invoice_created', status: 'SKIPPED', body: '{"x":1}', externalId: 'evt-csv-1', lastError: 'timeout, then "502"\nagain' });
  const newer = await seedWebhook({ eventType: 'invoice_settled', status: 'SKIPPED', body: '{"x":2}', externalId: 'evt-csv-2', lastError: null });
  const list = (...args: string[]) => cli(['webhooks', 'list', '--limit=2', ...args]);

  const csv = await list('--format=csv', '--fields=id,event_type,last_error');
  t.is(csv.code, 0, csv.stderr);
  t.is(csv.stdout, `id,event_type,last_error\n${newer},invoice_settled,\n${older},invoice_created,"timeout, then ""502""\nagain"\n`);
  const everyField = (await list('--format=csv')).stdout.split('\n')[0];
  t.is(everyField, 'id,provider,external_id,event_type,status,attempts,last_error,outcome,next_attempt_at,created_at,updated_at,processed_at');

  t.is((await list('--format=ids')).stdout, `${newer} ${older}\n`);
  t.is((await list('--format=count')).stdout, '2\n');

  const picked = await list('--format=json', '--fields=status,id');
  t.is(picked.code, 0, picked.stderr);
  t.deepEqual(JSON.parse(picked.stdout), [{ status: 'SKIPPED', id: newer }, { status: 'SKIPPED', id: older }]);
  t.is((await list('--json', '--fields=status,id')).stdout, picked.stdout, '--json is --format=json');
  t.is((await list('--json', '--format=json', '--fields', 'status', '--fields', 'id')).stdout, picked.stdout, 'repeated --fields add up');

  const table = await list('--fields=id,external_id');
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.regex(lines[0], /^\s*ID\s+EXTERNAL ID$/);
  t.regex(lines[1], new RegExp(`^\\s*${newer}\\s+evt-csv-2$`));
  t.is(lines.length, 3);
  await q(`DELETE FROM ${shop.prefix}sidecar_webhooks WHERE id IN (?)`, [[older, newer]]);
});

test.serial('webhooks show --format=csv|json and --fields; the table shows the raw body only when it is among the fields', async (t) => {
  const id = await seedWebhook({ eventType: 'invoice_settled', status: 'SKIPPED', body: '{"a":"b, c"}', externalId: 'evt-show-fields', lastError: null });
  const csv = await cli(['webhooks', 'show', `--id=${id}`, '--format=csv', '--fields=id,external_id,raw_body']);
  t.is(csv.code, 0, csv.stderr);
  t.is(csv.stdout, `id,external_id,raw_body\n${id},evt-show-fields,"{""a"":""b, c""}"\n`);
  const json = await cli(['webhooks', 'show', `--id=${id}`, '--format=json', '--fields=raw_body']);
  t.deepEqual(JSON.parse(json.stdout), { raw_body: '{"a":"b, c"}' });
  const table = await cli(['webhooks', 'show', `--id=${id}`, '--fields=id,status']);
  t.is(table.stdout, `id:     ${id}\nstatus: SKIPPED\n`);
  const withBody = await cli(['webhooks', 'show', `--id=${id}`, '--fields=status,raw_body']);
  t.is(withBody.stdout, 'status: SKIPPED\nraw body:\n{"a":"b, c"}\n');
  await q(`DELETE FROM ${shop.prefix}sidecar_webhooks WHERE id = ?`, [id]);
});

test.serial('payments and retries lists take the same formats; an empty list is 0, no ids, or a header row', async (t) => {
  const csv = await cli(['payments', 'list', `--order=${paymentsOrder}`, '--format=csv', '--fields=external_id,amount_minor,currency,meta']);
  t.is(csv.code, 0, csv.stderr);
  t.is(csv.stdout, [
    'external_id,amount_minor,currency,meta',
    'inv-pay-1,9900,DKK,"{""failure_code"":""insufficient_funds"",""failure_description"":""Insufficient funds"",""failure_state"":""soft_declined""}"',
    'inv-pay-2,12345,DKK,{}',
    '',
  ].join('\n'));
  t.is((await cli(['payments', 'list', `--order=${paymentsOrder}`, '--format=count'])).stdout, '2\n');
  t.regex((await cli(['payments', 'list', `--order=${paymentsOrder}`, '--format=ids'])).stdout, /^\d+ \d+\n$/);
  const amounts = await cli(['payments', 'list', `--order=${paymentsOrder}`, '--fields=external_id,amount_minor']);
  t.regex(amounts.stdout, /^EXTERNAL ID\s+AMOUNT\ninv-pay-1\s+99\.00 DKK\ninv-pay-2\s+123\.45 DKK\n$/, 'the table shows the amount with its currency');

  t.is((await cli(['payments', 'list', `--order=${orderWithoutPayments}`, '--format=count'])).stdout, '0\n');
  t.is((await cli(['payments', 'list', `--order=${orderWithoutPayments}`, '--format=ids'])).stdout, '');
  t.is((await cli(['payments', 'list', `--order=${orderWithoutPayments}`, '--format=csv', '--fields=id,status'])).stdout, 'id,status\n');

  const retries = await cli(['retries', 'list', '--order=801', '--format=csv', '--fields=order_id,attempt,status,idempotency_key']);
  t.is(retries.stdout, 'order_id,attempt,status,idempotency_key\n801,1,FAILED,retry-801-1\n801,2,PENDING,retry-801-2\n');
  t.is((await cli(['retries', 'list', '--order=801', '--format=count'])).stdout, '2\n');
});

test.serial('Bad output options are usage errors: an unknown field, --json with another format, a format the command has not', async (t) => {
  for (const [args, message] of [
    [['webhooks', 'list', '--fields=id,bogus'], /unknown field bogus; fields: id, provider, external_id/],
    [['webhooks', 'list', '--fields='], /--fields names no field/],
    [['webhooks', 'list', '--json', '--format=csv'], /--json and --format=csv contradict each other/],
    [['webhooks', 'list', '--format=yaml'], /Invalid values:[\s\S]*format/],
    [['webhooks', 'show', '--id=1', '--format=ids'], /Invalid values:[\s\S]*format/],
    [['payments', 'list', '--order=1', '--fields=amount'], /unknown field amount/],
    [['retries', 'list', '--fields=orderId'], /unknown field orderId/],
    [['webhooks', 'retry', '--id=1', '--yes', '--format=csv'], /Invalid values:[\s\S]*format/],
  ] as [string[], RegExp][]) {
    const run = await cli(args);
    t.is(run.code, 2, args.join(' '));
    t.is(run.stdout, '', args.join(' '));
    t.regex(run.stderr, message, args.join(' '));
  }
});

test('renderTable lines columns up by the width a terminal shows, for wide characters too', (t) => {
  const table = renderTable([{ header: 'NAME' }, { header: 'AMOUNT', align: 'right' }], [['中文名字 🍎', '1.00 DKK'], ['Åse', '99.00 DKK']]);
  t.is(table, [
    'NAME            AMOUNT',
    '中文名字 🍎   1.00 DKK',
    'Åse          99.00 DKK',
  ].join('\n'));
});
