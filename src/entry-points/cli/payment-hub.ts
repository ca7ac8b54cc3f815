import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { doctorCommand, runDoctor } from './payment-hub/doctor';
import { dunningCommands } from './payment-hub/dunning';
import { mobileWalletCommands } from './payment-hub/mobile-wallet';
import { paymentCommands, retryCommands } from './payment-hub/payments';
import { reconcileCommand, reconcileHandler } from './payment-hub/reconcile';
import { EXIT_USAGE, messageOf } from './payment-hub/runtime';
import { PACKAGE_VERSION } from '../../shared/package-version';
import { webhookCommands } from './payment-hub/webhooks';
import { woocommerceCommands } from './payment-hub/woocommerce';
import { workerCommands } from './payment-hub/workers';

/** Thrown from yargs' fail hook so a usage error ends the run before any handler opens a connection. */
class UsageError extends Error {}

/** The operator CLI (CONTRACT "Commands"): exit 0 on success, 1 on a failed operation, 2 on a usage error. */
export function buildCli(argv: string[]): Argv {
  return yargs(argv)
    .scriptName('payment-hub')
    .usage('$0 <command> [options]\n\nOperator commands of the payment hub. Configuration comes from the environment (and .env).')
    .command('webhooks', 'received payment webhooks: list, show, retry', webhookCommands)
    .command('mobile_wallet', 'mobile wallet set-up: webhooks register', mobileWalletCommands)
    .command('payments', "an order's payments: list", paymentCommands)
    .command('retries', 'scheduled dunning attempts: list', retryCommands)
    .command('dunning', 'what dunning won back: report', dunningCommands)
    .command('workers', 'the worker processes: list', workerCommands)
    .command('woocommerce', 'the hand-over of changes to WooCommerce: status, hand-over', woocommerceCommands)
    .command('reconcile', 'ask the providers about what is still open (--order=N or --all) and make the shop agree with them; --dry-run only looks; asks first unless --yes', reconcileCommand, reconcileHandler)
    .command('doctor', 'check the whole installation (configuration, database, migrations, Redis, the companion and the hand-over, the providers and their webhooks, proxies, clock, Node); exit 1 when a check fails', doctorCommand, runDoctor)
    .demandCommand(1, 'name a command: webhooks, mobile_wallet, payments, retries, dunning, workers, woocommerce, reconcile or doctor')
    .strict()
    .recommendCommands()
    .version('version', 'print the version of this release', PACKAGE_VERSION)
    .help()
    .alias('help', 'h')
    .wrap(null)
    .fail((message, error) => {
      // Only argument problems come here: command handlers turn their own errors into exit codes.
      throw new UsageError(message || messageOf(error));
    });
}

async function main(): Promise<void> {
  try {
    await buildCli(hideBin(process.argv)).parseAsync();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`payment-hub: ${error.message}\nRun payment-hub --help (or payment-hub <command> --help) for usage.\n`);
    process.exitCode = EXIT_USAGE;
  }
}

// Exit explicitly once stdout is flushed: a queue client still reconnecting to Redis must not keep the CLI alive.
main().then(
  () => process.stdout.write('', () => process.exit()),
  (error) => {
    process.stderr.write(`payment-hub: ${messageOf(error)}\n`);
    process.exit(1);
  },
);
