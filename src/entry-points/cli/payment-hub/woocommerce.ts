import type { Argv } from 'yargs';
import { loadConfigOrExit } from '../../../config';
import { HANDOVER_BATCH, type HandOverAttempt } from '../../../woocommerce-handover/woocommerce-handover';
import { ITEM_FORMATS, outputOptions, printItem, RESULT_FORMATS, formatOf, type FieldSet } from './output';
import { action, EXIT_FAILED, EXIT_OK, printJson, printText, withHub } from './runtime';

interface HandOverStatus {
  mode: 'companion' | 'no_companion';
  changesWaiting: number;
  changesFailed: number;
  handoverLagSeconds: number;
  route: HandOverAttempt['kind'];
  companionVersion: number | null;
  routeMessage: string | null;
}

const STATUS: FieldSet<HandOverStatus> = {
  fields: [
    { name: 'mode', header: 'MODE', label: 'WooCommerce makes the changes', value: (s) => s.mode, text: (s) => (s.mode === 'companion' ? 'yes (companion plugin)' : 'no (no companion heard from)') },
    { name: 'changes_waiting', header: 'WAITING', label: 'Changes waiting', value: (s) => s.changesWaiting },
    { name: 'changes_failed', header: 'FAILED', label: 'Changes failed in WooCommerce', value: (s) => s.changesFailed },
    { name: 'handover_lag_seconds', header: 'LAG (S)', label: 'Oldest waiting (s)', value: (s) => s.handoverLagSeconds },
    { name: 'route', header: 'ROUTE', label: 'Hand-over route', value: (s) => s.route, text: (s) => (s.route === 'applied' ? 'answers' : s.route) },
    { name: 'companion_version', header: 'VERSION', label: 'Companion version', value: (s) => s.companionVersion },
    { name: 'route_message', header: 'PROBLEM', label: 'Problem', value: (s) => s.routeMessage },
  ],
  tableDefault: ['mode', 'changes_waiting', 'changes_failed', 'handover_lag_seconds', 'route', 'companion_version', 'route_message'],
};

/**
 * `payment-hub woocommerce status`: how far the shop lags behind the service, and whether WordPress takes
 * the hand-over (a signed request with no change, so it changes nothing); exit 1 when the route does not answer.
 * `payment-hub woocommerce hand-over`: hands every waiting change to WordPress now.
 */
export function woocommerceCommands(y: Argv): Argv {
  return y
    .command('status', 'how many changes wait for WooCommerce, how long the oldest has waited, and whether WordPress answers the hand-over',
      (c) => outputOptions(c, ITEM_FORMATS, STATUS),
      action(async (argv) => {
        const config = loadConfigOrExit();
        const status = await withHub(config, async (hub): Promise<HandOverStatus> => {
          const [settings, backlog, ping] = await Promise.all([hub.settings.current(), hub.changes.backlog(), hub.handOver.send([])]);
          return {
            mode: settings.companion ? 'companion' : 'no_companion',
            changesWaiting: backlog.waiting,
            changesFailed: backlog.failed,
            handoverLagSeconds: backlog.oldestWaitingSeconds,
            route: ping.kind,
            companionVersion: ping.kind === 'applied' ? ping.version : null,
            routeMessage: ping.kind === 'applied' ? null : ping.message,
          };
        });
        printItem(status, STATUS, argv);
        return status.route === 'applied' ? EXIT_OK : EXIT_FAILED;
      }))
    .command('hand-over', 'hand every change still waiting for WooCommerce to WordPress now, and print what it did with each',
      (c) => outputOptions(c, RESULT_FORMATS),
      action(async (argv) => {
        const config = loadConfigOrExit();
        const results = await withHub(config, async (hub) => {
          const applied: { id: number; status: string; result: string | null }[] = [];
          const ids = await hub.changes.waitingIds(0, 10_000, new Date());
          for (let start = 0; start < ids.length; start += HANDOVER_BATCH) {
            const attempt = await hub.handOver.send(ids.slice(start, start + HANDOVER_BATCH));
            if (attempt.kind !== 'applied') return { ok: false as const, applied, message: attempt.message };
            applied.push(...attempt.changes.map((change) => ({ id: Number(change.id), status: String(change.status), result: change.result ?? null })));
          }
          return { ok: true as const, applied, message: null };
        });
        if (formatOf(argv) === 'json') {
          printJson({ handed_over: results.applied, error: results.message });
        } else {
          for (const change of results.applied) printText(`change ${change.id}: ${change.status}${change.result ? ` (${change.result})` : ''}`);
          printText(results.ok ? `${results.applied.length} change(s) handed over` : `stopped: ${results.message}`);
        }
        return results.ok ? EXIT_OK : EXIT_FAILED;
      }))
    .demandCommand(1, 'name a woocommerce command: status or hand-over');
}
