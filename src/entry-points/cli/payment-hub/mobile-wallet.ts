import inquirer from 'inquirer';
import type { Argv } from 'yargs';
import type { PaymentHub } from '../../composition/payment-hub';
import { loadConfigOrExit, type Config } from '../../../config';
import { isMobileWalletEventType, MOBILE_WALLET_EVENT_TYPES } from '../../../payments/providers/events';
import { parseList } from './format';
import { formatOf, outputOptions, RESULT_FORMATS } from './output';
import { action, cancelledOr, CliError, EXIT_FAILED, messageOf, printJson, printText, requireYesOrTerminal, usageError, withHub } from './runtime';

export interface RegistrationAnswers {
  url: string;
  events: string[];
}

export function mobileWalletCommands(y: Argv): Argv {
  return y
    .command('webhooks', 'webhook registrations with the mobile wallet', (w) => w
      .command('register', 'register the webhook URL and events with the mobile wallet and store the secret it returns; asks first unless --yes', (c) => outputOptions(c
        .option('url', { type: 'string', describe: 'public webhook URL (default: MOBILE_WALLET_WEBHOOK_URL)' })
        .option('events', { type: 'string', describe: `comma-separated events (default: all ${MOBILE_WALLET_EVENT_TYPES.length} supported)` })
        .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'ask nothing: take the defaults for what no flag gives' })
        .check((argv) => {
          if (argv.url !== undefined) checkUrl(argv.url);
          if (argv.events !== undefined) checkEvents(parseList(argv.events));
          return true;
        }), RESULT_FORMATS),
      action(async (argv) => {
        const config = loadConfigOrExit();
        requireCredentials(config);
        const answers = await askRegistration(config, {
          url: argv.url, events: argv.events === undefined ? undefined : parseList(argv.events), yes: argv.yes,
        });
        if (!answers) {
          process.stderr.write('payment-hub: nothing registered\n');
          return EXIT_FAILED;
        }
        const registrationId = await withHub(config, (hub) => register(hub, answers));
        // The secret stays in the database: it is shown once by the provider and must not reach logs or scrollback.
        if (formatOf(argv) === 'json') return printJson({ registration_id: registrationId, url: answers.url, events: answers.events });
        printText(`registered mobile wallet webhook ${registrationId} for ${answers.url} (${answers.events.length} events)`);
      }))
      .demandCommand(1, 'name a mobile_wallet webhooks command: register'))
    .demandCommand(1, 'name a mobile_wallet command: webhooks');
}

async function register(hub: Pick<PaymentHub, 'mobileWallet' | 'registrations'>, answers: RegistrationAnswers): Promise<string> {
  const result = await hub.mobileWallet.registerWebhook(answers);
  if (!result.ok) throw new CliError(`the mobile wallet did not register the webhook: ${result.message}`);
  const { id, secret } = result.value;
  try {
    await hub.registrations.add({ registrationId: id, url: answers.url, events: answers.events, secret });
  } catch (error) {
    // Without the stored secret no delivery to this registration could be verified, and the provider
    // never shows the secret again: take the registration back so the operator can simply run this again.
    const undo = await hub.mobileWallet.deleteWebhook(id);
    throw new CliError(`could not store the registration (${messageOf(error)}); ${undo.ok ? 'it was deleted at the provider again' : `delete webhook ${id} at the provider by hand`}`);
  }
  return id;
}

function requireCredentials(config: Config): void {
  const wallet = config.mobileWallet;
  const missing = ([['MOBILE_WALLET_CLIENT_ID', wallet.clientId], ['MOBILE_WALLET_CLIENT_SECRET', wallet.clientSecret],
    ['MOBILE_WALLET_SUBSCRIPTION_KEY', wallet.subscriptionKey], ['MOBILE_WALLET_MSN', wallet.merchantSerialNumber]] as const)
    .filter(([, value]) => !value).map(([name]) => name);
  if (missing.length) throw new CliError(`the mobile wallet is not configured: set ${missing.join(', ')}`);
}

/**
 * Flags answer their questions; `--yes` takes the defaults for the rest and skips the confirmation.
 * Whatever is still open is asked on the terminal. Returns null when the operator declines.
 */
export async function askRegistration(config: Config, given: { url?: string; events?: string[]; yes: boolean }): Promise<RegistrationAnswers | null> {
  const defaultUrl = config.mobileWallet.webhookUrl;
  const url = given.url ?? (given.yes ? defaultUrl : undefined);
  const events = given.events ?? (given.yes ? [...MOBILE_WALLET_EVENT_TYPES] : undefined);
  if (given.yes && url === undefined) throw usageError('no webhook URL: pass --url or set MOBILE_WALLET_WEBHOOK_URL');
  if (url !== undefined && events !== undefined && given.yes) return { url, events };

  requireYesOrTerminal(false, 'mobile_wallet webhooks register asks before it registers', 'pass --url, --events and --yes to run it unattended');
  try {
    return await promptForRest(defaultUrl, url, events);
  } catch (error) {
    throw cancelledOr(error);
  }
}

async function promptForRest(defaultUrl: string | undefined, url: string | undefined, events: string[] | undefined): Promise<RegistrationAnswers | null> {
  // Prompts go to stderr so stdout carries only the result.
  const prompt = inquirer.createPromptModule({ output: process.stderr });
  if (url === undefined) {
    ({ url } = await prompt<{ url: string }>([{
      type: 'input', name: 'url', message: 'Webhook URL the mobile wallet should call', default: defaultUrl,
      validate: (value: string) => { try { return checkUrl(value); } catch (error) { return messageOf(error); } },
    }]));
  }
  if (events === undefined) {
    ({ events } = await prompt<{ events: string[] }>([{
      type: 'checkbox', name: 'events', message: 'Events to receive',
      choices: MOBILE_WALLET_EVENT_TYPES.map((event) => ({ name: event, value: event, checked: true })),
      validate: (chosen: readonly unknown[]) => chosen.length > 0 || 'choose at least one event',
    }]));
  }
  const { confirmed } = await prompt<{ confirmed: boolean }>([{
    type: 'confirm', name: 'confirmed', default: true, message: `Register ${url} for ${events.length} events?`,
  }]);
  return confirmed ? { url, events } : null;
}

export function checkUrl(value: string): true {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new Error(`--url must be an absolute URL, not ${JSON.stringify(value)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('--url must be an http(s) URL');
  return true;
}

export function checkEvents(events: string[]): true {
  if (events.length === 0) throw new Error('--events names no event');
  const unknown = events.filter((event) => !isMobileWalletEventType(event));
  if (unknown.length) throw new Error(`unsupported event ${unknown.join(', ')}; supported: ${MOBILE_WALLET_EVENT_TYPES.join(', ')}`);
  return true;
}
