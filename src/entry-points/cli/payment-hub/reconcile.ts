import type { Argv } from 'yargs';
import type { PaymentHub } from '../../composition/payment-hub';
import { loadConfigOrExit } from '../../../config';
import type { Finding } from '../../../reconciliation';
import { reconcileSummary, type SkippedProvider } from '../../../reconciliation/reconcile-now.use-case';
import { shopPreflight } from '../../../installation/shop-preflight';
import { renderTable } from './format';
import { formatOf, outputOptions, RESULT_FORMATS, type Format } from './output';
import { action, CliError, confirm, EXIT_FAILED, EXIT_OK, listProgress, printJson, printText, requireYesOrTerminal, withHub } from './runtime';
import type { ProgressReporter } from '../progress';
import { positiveInteger } from './webhooks';

const WARNING = 'it asks the providers and may change payments, agreements, orders and subscriptions as their webhooks would have';

interface ReconcileArgs {
  order?: number;
  all?: boolean;
  'dry-run'?: boolean;
  yes?: boolean;
}

/**
 * `payment-hub reconcile --order=N | --all [--dry-run] [--json] [--yes]`: asks the providers about what is still
 * open (CONTRACT) and makes the shop agree with them, through the same handlers as their webhooks. `--dry-run`
 * only reads (GETs to the providers, nothing written anywhere) and prints what would change.
 */
export function reconcileCommand(y: Argv) {
  return outputOptions(y
    .option('order', { type: 'number', describe: 'everything open about this order (its id)' })
    // No default: yargs counts a defaulted flag as given, which would trip the conflict with --order.
    .option('all', { type: 'boolean', describe: 'everything open' })
    .option('dry-run', { type: 'boolean', default: false, describe: 'print what would change; change nothing, here or at a provider' })
    .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'do not ask for confirmation (for unattended runs)' })
    .conflicts('order', 'all')
    .check((argv) => {
      if (argv.order === undefined && !argv.all) throw new Error('name the order with --order=N, or pass --all');
      return argv.order === undefined || positiveInteger(argv.order, '--order');
    }), RESULT_FORMATS);
}

export const reconcileHandler = action<ReconcileArgs & { format?: string; json?: boolean }>(async (argv) => {
  const dryRun = argv['dry-run'] === true;
  const yes = argv.yes === true;
  if (!dryRun) requireYesOrTerminal(yes, `reconcile asks before it changes anything (${WARNING})`, 'pass --yes to run it unattended, or --dry-run only to look');
  const config = loadConfigOrExit();
  const format = formatOf(argv);
  return withHub(config, async (hub, dataSource) => {
    // Nothing is read from the providers, let alone changed, in a database that is not this shop's or with no provider to ask.
    const preflight = await shopPreflight(dataSource, config, { providers: true });
    if (preflight.kind === 'refused') throw new CliError(`${preflight.reason}; nothing was changed`);
    return reconcile(hub, { orderId: argv.order, dryRun, yes, format });
  });
});

async function reconcile(hub: PaymentHub, options: { orderId?: number; dryRun: boolean; yes: boolean; format: Format }): Promise<number> {
  const scope = options.orderId === undefined ? 'all' as const : { orderId: options.orderId };
  // One line per pass over what is open: asking the providers (the dry run), then making the changes.
  let pass: { reporter: ProgressReporter; done: number } | undefined;
  let passes = 0;
  const outcome = await hub.reconcileNow.execute(scope, {
    dryRun: options.dryRun,
    confirm: options.yes ? undefined : async (findings) => {
      const changing = findings.filter((finding) => finding.outcome === 'would_change').length;
      printText(describe(findings, true));
      return confirm(`Make the ${changing} change${changing === 1 ? '' : 's'} above? ${WARNING.charAt(0).toUpperCase()}${WARNING.slice(1)}.`);
    },
    progress: (done, total) => {
      if (total <= 5) return;
      if (!pass || done <= pass.done) {
        passes += 1;
        // Told after each item: the pace counts from the first one told.
        pass = { reporter: listProgress(passes === 1 ? 'reconcile: asking the providers' : 'reconcile: making the changes', total, options.format, done), done };
      }
      pass.done = done;
      pass.reporter.update(done);
      if (done === total) pass.reporter.finish();
    },
  });
  pass?.reporter.stop();
  if (outcome.kind === 'order_not_found') throw new CliError(`order ${options.orderId} does not exist`);
  if (outcome.kind === 'declined') {
    process.stderr.write('payment-hub: nothing changed\n');
    return EXIT_FAILED;
  }
  if (options.format === 'json') printJson(outcome.document);
  else printText(describe(outcome.findings, options.dryRun, outcome.skipped));
  return outcome.unreachable ? EXIT_FAILED : EXIT_OK;
}

/** `card_gateway: 15 open items not asked about (CARD_GATEWAY_API_KEY unset)`. */
function describeSkipped(skipped: SkippedProvider): string {
  return `${skipped.provider}: ${skipped.items} open item${skipped.items === 1 ? '' : 's'} not asked about (${skipped.reason})`;
}

function describe(findings: Finding[], dryRun: boolean, skipped: SkippedProvider[] = []): string {
  const s = reconcileSummary(findings);
  const notAsked = skipped.map((one) => `\n${describeSkipped(one)}`).join('');
  if (!findings.length) return `nothing open to ask ${skipped.length ? 'a configured provider' : 'the providers'} about${notAsked}`;
  const table = renderTable(
    [{ header: 'KIND' }, { header: 'PROVIDER' }, { header: 'ID', align: 'right' }, { header: 'EXTERNAL ID', maxWidth: 40 }, { header: 'ORDER', align: 'right' },
      { header: 'HERE' }, { header: 'AT PROVIDER' }, { header: 'OUTCOME' }, { header: 'EVENTS', maxWidth: 60 }],
    findings.map((f) => [f.kind, f.provider, f.id, f.externalId, f.orderId, f.localStatus ?? '(none)', f.providerState ?? '', f.outcome,
      f.outcome === 'unreachable' ? f.error : f.events.join(', ')]),
  );
  const line = dryRun
    ? `dry run: asked about ${s.checked}, ${s.would_change} would change, ${s.unreachable} could not be asked; nothing was changed`
    : `asked about ${s.checked}: ${s.found} with news from the provider, ${s.changed} changed, ${s.unreachable} could not be asked`;
  return `${table}\n${line}${notAsked}`;
}
