import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { doctorCommand, runDoctor } from './payment-hub/doctor';
import { dunningCommands } from './payment-hub/dunning';
import { helpdeskCommands } from './payment-hub/helpdesk';
import { mobileWalletCommands } from './payment-hub/mobile-wallet';
import { paymentCommands, retryCommands } from './payment-hub/payments';
import { reconcileCommand, reconcileHandler } from './payment-hub/reconcile';
import { EXIT_USAGE, logVerbosely, messageOf } from './payment-hub/runtime';
import { PACKAGE_VERSION } from '../../shared/package-version';
import { webhookCommands } from './payment-hub/webhooks';
import { woocommerceCommands } from './payment-hub/woocommerce';
import { workerCommands } from './payment-hub/workers';

/** Thrown from yargs' fail hook so a usage error ends the run before any handler opens a connection. */
class UsageError extends Error {
  /** The command it is about (`webhooks list`), empty for payment-hub itself: where `--help` says more. */
  constructor(message: string, readonly command: string[]) {
    super(message);
  }
}

/**
 * yargs names an unknown option by its keys (`bogus-flag, bogusFlag`: its camel-case expansion adds the second);
 * said once per argument, as the user typed it (`--bogus-flag`). Other messages are left as they are.
 */
function inUserSpelling(message: string, args: readonly string[]): string {
  const unknown = /^Unknown arguments?: (.*)$/s.exec(message);
  if (!unknown) return message;
  const spelled = new Map<string, string>();
  for (const arg of args) {
    if (arg === '--') break;
    const long = /^--(?:no-)?([^=]+)/.exec(arg);
    if (long) {
      const written = `--${arg.slice(2).split('=')[0]}`;
      for (const key of [long[1], camelCase(long[1]), arg.slice(2).split('=')[0]]) if (!spelled.has(key)) spelled.set(key, written);
    } else if (/^-[^-\d]/.test(arg)) {
      for (const letter of arg.slice(1).split('=')[0]) if (!spelled.has(letter)) spelled.set(letter, `-${letter}`);
    }
  }
  const names = [...new Set(unknown[1].split(', ').map((key) => spelled.get(key) ?? key))];
  return `${names.length === 1 ? 'Unknown argument' : 'Unknown arguments'}: ${names.join(', ')}`;
}

/** The commands yargs has entered so far (`['webhooks', 'list']`), which its typings leave out. */
interface YargsInternals {
  getInternalMethods(): { getContext(): { commands: string[] } };
}

const camelCase = (name: string) => name.replace(/-+([^-])/g, (_, letter: string) => letter.toUpperCase());

/** The operator CLI (CONTRACT "Commands"): exit 0 on success, 1 on a failed operation, 2 on a usage error. */
export function buildCli(argv: string[]): Argv {
  const cli: Argv = yargs(argv)
    .scriptName('payment-hub')
    .usage('$0 <command> [options]\n\nOperator commands of the payment hub. Configuration comes from the environment (and .env).')
    .command('webhooks', 'received payment webhooks: list, show, retry', webhookCommands)
    .command('mobile_wallet', 'mobile wallet set-up: webhooks register', mobileWalletCommands)
    .command('payments', "an order's payments: list", paymentCommands)
    .command('retries', 'scheduled dunning attempts: list', retryCommands)
    .command('dunning', 'what dunning won back: report', dunningCommands)
    .command('workers', 'the worker processes: list', workerCommands)
    .command('woocommerce', 'the hand-over of changes to WooCommerce: status, hand-over', woocommerceCommands)
    .command('helpdesk', "the helpdesk's custom card: card-template", helpdeskCommands)
    .command('reconcile', 'ask the providers about what is still open (--order=N or --all) and make the shop agree with them; --dry-run only looks; asks first unless --yes', reconcileCommand, reconcileHandler)
    .command('doctor', 'check the whole installation (configuration, database, migrations, Redis, the companion and the hand-over, the providers and their webhooks, proxies, clock, Node); exit 1 when a check fails', doctorCommand, runDoctor)
    .option('verbose', { type: 'boolean', global: true, describe: "also write the service's log lines of the command on stderr (JSON); without it only an error is, as a plain line" })
    .middleware((args) => logVerbosely(args.verbose === true))
    .demandCommand(1, 'name a command: webhooks, mobile_wallet, payments, retries, dunning, workers, woocommerce, helpdesk, reconcile or doctor')
    .strict()
    .recommendCommands()
    .version('version', 'print the version of this release', PACKAGE_VERSION)
    .help()
    .alias('help', 'h')
    .wrap(null)
    .fail((message, error) => {
      // Only argument problems come here: command handlers turn their own errors into exit codes.
      const command = [...(cli as unknown as YargsInternals).getInternalMethods().getContext().commands];
      throw new UsageError(inUserSpelling(message || messageOf(error), argv), command);
    });
  return cli;
}

async function main(): Promise<void> {
  try {
    await buildCli(hideBin(process.argv)).parseAsync();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`payment-hub: ${error.message}\nRun ${['payment-hub', ...error.command, '--help'].join(' ')} for usage.\n`);
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
