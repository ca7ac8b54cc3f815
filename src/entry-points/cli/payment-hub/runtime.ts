import inquirer from 'inquirer';
import { buildPaymentHub, type PaymentHub } from '../../composition/payment-hub';
import type { Config } from '../../../config';
import type { DataSource } from 'typeorm';
import { createShopDataSource, databaseAddress } from '../../../data-access/data-source';
import { databaseProblem, type DatabaseProblem } from '../../../installation/database-problems';
import { createLogger, logger, type Logger } from '../../../logger';
import { progressBar } from './format';
import { count, ProgressReporter, StderrLine } from '../progress';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** An error the operator can act on: its message is printed as is, with the exit code it carries. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: number = EXIT_FAILED) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, EXIT_USAGE);

/** The line on stderr that bars and progress are drawn on; log lines written meanwhile go above it. */
export const statusLine = new StderrLine();

/**
 * The progress of a command going through a list (`total` items): on a terminal the bar with the share done and
 * the time left, redrawn on the status line (not with --json, whose document shares the screen); elsewhere a
 * plain line on stderr every few seconds (PROGRESS_INTERVAL_SECONDS).
 */
export function listProgress(label: string, total: number, format: string, position = 0): ProgressReporter {
  const terminal = format === 'table' ? statusLine : { enabled: false, draw() {}, finish() {} };
  return new ProgressReporter({
    label, from: 0, to: total, position, live: terminal,
    describe: (done, of, onTerminal) => (onTerminal ? progressBar(done, of) : `${count(done)} of ${count(of)}`),
  });
}

/** `--verbose`: the command's log lines as the service writes them. */
let verbose = false;

/** Set from `--verbose` before a command runs. */
export function logVerbosely(on: boolean): void {
  verbose = on;
}

/**
 * An error event as one plain line on stderr, as the CLI's other messages are (`payment-hub: error
 * charge_taken_after_cancel: orderId=12 provider=mobile_wallet ...`); formatted by the service's logger first, so
 * secrets are censored the same way. The stack is left to `--verbose`.
 */
const plainErrors = createLogger({
  write(line: string) {
    const { event, level, time: _time, stack: _stack, ...fields } = JSON.parse(line) as Record<string, unknown>;
    const words = Object.entries(fields).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
    process.stderr.write(`payment-hub: ${String(level)} ${String(event)}${words.length ? `: ${words.join(' ')}` : ''}\n`);
  },
});

/**
 * The log of a command's work. What the command did is its output, so the lines the service's code writes on the
 * way (a webhook that failed again, Redis not answering, a hand-over to try later) are not written amid it: only an
 * error, as one plain line on stderr. `--verbose` writes every line on stderr, as JSON, as the API and the worker do.
 */
export const cliLogger: Logger = {
  info: (event, fields) => {
    if (verbose) statusLine.around(() => logger.info(event, fields));
  },
  warn: (event, fields) => {
    if (verbose) statusLine.around(() => logger.warn(event, fields));
  },
  error: (event, fields) => statusLine.around(() => (verbose ? logger : plainErrors).error(event, fields)),
};

/** The shop's database did not take the command's connection: what is wrong, and the fix (src/installation/database-problems.ts). */
export class DatabaseUnreachableError extends CliError {
  constructor(message: string, readonly problem: DatabaseProblem) {
    super(message);
  }
}

/** The hub for one command: database and queue are opened for it and closed after it, even when it fails. */
export async function withHub<T>(config: Config, work: (hub: PaymentHub, dataSource: DataSource) => Promise<T>, log: Logger = cliLogger): Promise<T> {
  const dataSource = createShopDataSource(config.db, 2);
  try {
    await dataSource.initialize();
  } catch (error) {
    const problem = databaseProblem(error, config.db);
    throw new DatabaseUnreachableError(`cannot connect to the database ${config.db.name} at ${databaseAddress(config.db)}: ${messageOf(error)}. Fix: ${problem.fix}`, problem);
  }
  const hub = buildPaymentHub(config, dataSource, log, 'producer');
  try {
    return await work(hub, dataSource);
  } finally {
    hub.handOver.close();
    await Promise.all([hub.queue.close(1000), hub.providerLimits.close()]);
    await dataSource.destroy();
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The one JSON document of a `--format=json` (`--json`) run. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printText(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * Wraps a command handler so that nothing it throws reaches yargs (which would report it as a usage
 * error): the handler's result or error becomes the exit code, and the message goes to stderr.
 */
export function action<A>(run: (argv: A) => Promise<number | void>): (argv: A) => Promise<void> {
  return async (argv) => {
    try {
      process.exitCode = (await run(argv)) ?? EXIT_OK;
    } catch (error) {
      statusLine.finish();
      process.stderr.write(`payment-hub: ${messageOf(error)}\n`);
      process.exitCode = error instanceof CliError ? error.exitCode : EXIT_FAILED;
    }
  };
}

/**
 * A command that changes the shop or calls a provider asks first unless `--yes` is given. It can ask
 * only on a terminal (the answer is read from stdin, the question written to stderr); without one and
 * without `--yes` it stops at once with a usage error rather than wait for an answer that cannot come.
 */
export function requireYesOrTerminal(yes: boolean, what: string, hint = 'pass --yes to run it unattended'): void {
  if (yes) return;
  const notTerminal = !process.stdin.isTTY ? 'stdin' : !process.stderr.isTTY ? 'stderr' : null;
  if (notTerminal) throw usageError(`${what}, and ${notTerminal} is not a terminal, so nothing can be asked: ${hint}`);
}

/** A yes/no question on stderr (stdout carries only the result). Ctrl+C cancels the command. */
export async function confirm(message: string, defaultAnswer = false): Promise<boolean> {
  const prompt = inquirer.createPromptModule({ output: process.stderr });
  try {
    const { confirmed } = await prompt<{ confirmed: boolean }>([{ type: 'confirm', name: 'confirmed', default: defaultAnswer, message }]);
    return confirmed;
  } catch (error) {
    throw cancelledOr(error);
  }
}

/** Ctrl+C in a prompt becomes "cancelled" (exit 1); anything else stays as it is. */
export function cancelledOr(error: unknown): unknown {
  return error instanceof Error && error.name === 'ExitPromptError' ? new CliError('cancelled; nothing was changed') : error;
}
