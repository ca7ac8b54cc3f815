import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { MYSQLI_CLIENT_FLAGS, parseDbHost } from './wordpress/wp-config-file';
import { wpConfigSettings } from './wordpress/wp-config-settings';
import { CARD_GATEWAY_LIMITS } from './payments/providers/card-gateway/client';
import { trustCertificateAuthorities } from './payments/providers/http-request';
import type { ProviderLimits } from './payments/providers/request-limits';
import { DEFAULT_STATEMENT_TIMEOUT_MS } from './data-access/connection-pool';
import { parsePaydays, type Paydays } from './shop/danish-bank-calendar';

/**
 * The service's whole configuration, read once from the environment (and `.env` when present).
 * A missing or malformed variable stops the process with one line naming it; secrets are never echoed.
 */
export interface Config {
  db: {
    host: string;
    port: number;
    /** A Unix socket instead of TCP (DB_HOST `localhost:/path/to/mysqld.sock`, as WordPress writes it). */
    socketPath?: string;
    /** TLS to the database: on when MYSQL_CLIENT_FLAGS has MYSQLI_CLIENT_SSL or DB_SSL_CA is set. */
    tls?: { caFile?: string; verify: boolean };
    charset: string;
    user: string;
    password: string;
    name: string;
    tablePrefix: string;
    /** DB_STATEMENT_TIMEOUT_MS: the longest one statement of the worker or the CLI may go unanswered before its connection is dropped. */
    statementTimeoutMs: number;
  };
  /** Said once at start: values of WP_CONFIG_FILE that could not be read without running it. */
  notices: string[];
  redisUrl: string;
  http: {
    host: string; port: number; tlsCertFile?: string; tlsKeyFile?: string; trustedProxies: string[]; metricsAllowed: string[];
    /** How far the API's V8 heap may grow past what was live after a full collection, in percent; 0 leaves it to V8. */
    heapGrowthPercent: number;
    /** API_DB_STATEMENT_TIMEOUT_MS: the same bound for the API's statements, short enough to answer within a provider's timeout. */
    dbStatementTimeoutMs: number;
  };
  helpdesk: {
    apiKey?: string;
    apiSecret?: string;
    throttle: { maxFailures: number; windowSeconds: number; blockSeconds: number };
    /** HELPDESK_CARD_TOKEN: the Bearer token of the helpdesk's custom card (Dixa); unset refuses every card request. */
    cardToken?: string;
    /** HELPDESK_CARD_ALLOW_FROM: the only addresses allowed to ask for the card (Dixa's published ones); empty allows any. */
    cardAllowFrom: string[];
  };
  shopUrl?: string;
  wordpressSecrets: { loggedInKey?: string; loggedInSalt?: string; nonceKey?: string; nonceSalt?: string };
  cardGateway: { apiUrl: string; apiKey?: string; webhookSecret?: string; limits: ProviderLimits };
  mobileWallet: {
    apiUrl: string;
    clientId?: string;
    clientSecret?: string;
    subscriptionKey?: string;
    merchantSerialNumber?: string;
    webhookUrl?: string;
    webhookSecret?: string;
  };
  dunningPlanSeconds: number[];
  /** The decline policy's settings besides DUNNING_PLAN (src/dunning/decline-policy.ts). */
  dunning: DunningConfig;
  /** The worker's watchdog: jobs in hand and none finished for this long, and the worker is replaced. */
  workerStallSeconds: number;
  /** Asking the providers about what is still open on their side (RECONCILE_*). */
  reconcile: ReconcileConfig;
  /** E-mails before a subscription's stored card expires (CARD_EXPIRY_REMINDER_*). */
  cardExpiryReminders: CardExpiryReminderConfig;
  /** The look at each subscription's payment method a few days before its renewal (PRE_RENEWAL_CHECK_*). */
  preRenewalCheck: PreRenewalCheckConfig;
  /** The customer lookup's contact index (CUSTOMER_INDEX_*). */
  customerIndex: CustomerIndexConfig;
  siteExtensions?: string;
  /**
   * The certificate authorities (PEM) of NODE_EXTRA_CA_CERTS when `.env` names them: Node reads that variable only
   * from the environment it starts with, so the service adds these itself (see `readConfig`). Empty otherwise.
   */
  extraCertificateAuthorities: string[];
}

export interface CustomerIndexConfig {
  /** CUSTOMER_INDEX_SWEEP_SECONDS: a whole pass of the rolling sweep over the store takes this long, and starts at most this often; 0: no sweep. */
  sweepSeconds: number;
}

export interface ReconcileConfig {
  /** RECONCILE_ENABLED: the worker reconciles on its own (the CLI works either way). */
  enabled: boolean;
  /** RECONCILE_SCHEDULE in seconds, as written (see reconciliation/schedule.ts for how it is read). */
  scheduleSeconds: number[];
  /** RECONCILE_BATCH: items asked about in one pass at most. */
  batch: number;
  /** RECONCILE_MAX_PER_SECOND: requests to each provider per second at most. */
  maxPerSecond: number;
  /** RECONCILE_INTERVAL_SECONDS: how often the worker starts a pass. */
  intervalSeconds: number;
}

/** CARD_EXPIRY_REMINDER_*: when customers are told their card expires before the next renewal, and the worker's pace. */
export interface CardExpiryReminderConfig {
  /** CARD_EXPIRY_REMINDER_DAYS: days before the end of the card's expiry month the e-mail goes; 0 turns reminders off. */
  days: number;
  /** CARD_EXPIRY_REMINDER_INTERVAL_SECONDS: a pass over the subscriptions starts at most this often. */
  intervalSeconds: number;
  /** CARD_EXPIRY_REMINDER_MAX_PER_SECOND: payment methods read from the card gateway per second at most (each process). */
  maxPerSecond: number;
}

export interface PreRenewalCheckConfig {
  /** PRE_RENEWAL_CHECK_DAYS: days before a renewal its payment method is read at the provider; 0 turns the check off. */
  days: number;
  /** PRE_RENEWAL_CHECK_INTERVAL_SECONDS: a pass over the renewals due starts at most this often. */
  intervalSeconds: number;
}

export class ConfigError extends Error {
  /** What to do about it, when more can be said than "correct the setting". */
  constructor(message: string, readonly fix?: string) {
    super(message);
  }
}

/** A required variable that is set nowhere (the environment, `.env`, WP_CONFIG_FILE). */
export class MissingSettingError extends ConfigError {}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string, fallback?: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function required(env: Env, name: string): string {
  const value = text(env, name);
  if (value === undefined) throw new MissingSettingError(`${name} is required but not set`);
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

function url(env: Env, name: string, fallback?: string): string | undefined {
  const raw = text(env, name, fallback);
  if (raw === undefined) return undefined;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:' && parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
      throw new Error('scheme');
    }
  } catch {
    throw new ConfigError(`${name} must be an absolute URL`);
  }
  return raw.replace(/\/+$/, '');
}

function readableFile(env: Env, name: string): string | undefined {
  const file = text(env, name);
  if (file === undefined) return undefined;
  try {
    fs.accessSync(file, fs.constants.R_OK);
  } catch {
    throw new ConfigError(`${name} names a file that cannot be read`);
  }
  return file;
}

/** Both TLS files or neither; a certificate and its own unencrypted key, so a wrong file stops the start with its name. */
function tlsFiles(env: Env): { tlsCertFile?: string; tlsKeyFile?: string } {
  const tlsCertFile = readableFile(env, 'TLS_CERT_FILE');
  const tlsKeyFile = readableFile(env, 'TLS_KEY_FILE');
  if ((tlsCertFile === undefined) !== (tlsKeyFile === undefined)) {
    throw new ConfigError(`${tlsCertFile ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} must be set together with the other TLS file`);
  }
  if (tlsCertFile === undefined || tlsKeyFile === undefined) return {};
  let certificate: crypto.X509Certificate;
  try {
    certificate = new crypto.X509Certificate(fs.readFileSync(tlsCertFile));
  } catch {
    throw new ConfigError('TLS_CERT_FILE is not a PEM certificate');
  }
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey(fs.readFileSync(tlsKeyFile));
  } catch {
    throw new ConfigError('TLS_KEY_FILE is not an unencrypted PEM private key');
  }
  if (!certificate.checkPrivateKey(key)) throw new ConfigError('TLS_KEY_FILE is not the key of the certificate in TLS_CERT_FILE');
  return { tlsCertFile, tlsKeyFile };
}

export interface DunningConfig {
  /** Waits before each attempt after a processing error (DUNNING_PROCESSING_PLAN). */
  processingPlanSeconds: number[];
  /** Charges one payment method may take in a day and in 30 days, from any source (DUNNING_MAX_CHARGES_PER_DAY, _PER_30_DAYS). */
  caps: { perDay: number; per30Days: number };
  /** Days the customer has to give a new payment method before the subscription is cancelled (DUNNING_CUSTOMER_DAYS). */
  customerDays: number;
  /** Days before that deadline the customer is reminded (DUNNING_REMINDER_DAYS). */
  reminderDays: number;
  /** The share of failed renewals (0–50 %, stable per renewal) that follows the baseline plan instead (DUNNING_HOLDOUT_PERCENT; src/dunning/holdout.ts). */
  holdoutPercent: number;
  /** When customers' money arrives (DUNNING_PAYDAYS; src/shop/danish-bank-calendar.ts): a decline for lack of funds gets an attempt early that day. */
  paydays: Paydays;
}

/**
 * The card schemes' ceilings on charges to one card, which the caps may not pass: above them a retry costs the
 * shop a fee or is refused outright, whatever the decline (sources: shared/reference/payment-providers.md,
 * "Card schemes"). Mastercard's 35 in 30 days is looser than Visa's 20, so Visa's binds the 30 days.
 */
const CARD_SCHEME_CAPS = {
  perDay: { most: 10, rule: 'Mastercard allows 10 attempts per card in 24 hours' },
  per30Days: { most: 20, rule: 'Visa allows 20 reattempts per card in 30 days (since 19 May 2025)' },
};

/** A whole number from 1 up to a card scheme's ceiling; one above it is refused with the scheme's rule. */
function schemeCap(env: Env, name: string, fallback: number, cap: { most: number; rule: string }): number {
  const raw = text(env, name);
  if (raw !== undefined && /^\d+$/.test(raw) && Number(raw) > cap.most) throw new ConfigError(`${name} must be at most ${cap.most}: ${cap.rule}`);
  return integer(env, name, fallback, 1, cap.most);
}

function dunningConfig(env: Env): DunningConfig {
  const processingPlanSeconds = parseDunningPlan(text(env, 'DUNNING_PROCESSING_PLAN', '1h,6h,1d')!);
  if (!processingPlanSeconds) throw new ConfigError('DUNNING_PROCESSING_PLAN must be a comma-separated list of waits such as 1h,6h,1d');
  const perDay = schemeCap(env, 'DUNNING_MAX_CHARGES_PER_DAY', 3, CARD_SCHEME_CAPS.perDay);
  const per30Days = schemeCap(env, 'DUNNING_MAX_CHARGES_PER_30_DAYS', 20, CARD_SCHEME_CAPS.per30Days);
  if (per30Days < perDay) throw new ConfigError('DUNNING_MAX_CHARGES_PER_30_DAYS must be at least DUNNING_MAX_CHARGES_PER_DAY');
  const customerDays = integer(env, 'DUNNING_CUSTOMER_DAYS', 14, 1, 365);
  const reminderDays = integer(env, 'DUNNING_REMINDER_DAYS', 3, 0, 365);
  if (reminderDays >= customerDays) throw new ConfigError('DUNNING_REMINDER_DAYS must be fewer than DUNNING_CUSTOMER_DAYS');
  const holdoutPercent = integer(env, 'DUNNING_HOLDOUT_PERCENT', 0, 0, 50);
  const paydays = parsePaydays(text(env, 'DUNNING_PAYDAYS', 'last-bank-day')!);
  if (!paydays) throw new ConfigError('DUNNING_PAYDAYS must be last-bank-day, days of the month such as 1,15, or both (15,last-bank-day)');
  return { processingPlanSeconds, caps: { perDay, per30Days }, customerDays, reminderDays, holdoutPercent, paydays };
}

/** Parses `12h,12h,1d,2d,3d` into seconds. Units: s, m, h, d. */
export function parseDunningPlan(raw: string): number[] | undefined {
  const unit: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
  const steps = raw.split(',').map((part) => part.trim());
  const seconds: number[] = [];
  for (const step of steps) {
    const match = /^(\d+)([smhd])$/.exec(step);
    if (!match || Number(match[1]) === 0) return undefined;
    seconds.push(Number(match[1]) * unit[match[2]]);
  }
  return seconds;
}

/** RECONCILE_*: when and how often the worker asks the providers about open payments, charges and agreements. */
function reconcileConfig(env: Env): ReconcileConfig {
  const enabledRaw = text(env, 'RECONCILE_ENABLED', 'true')!.toLowerCase();
  if (!['true', 'false', '1', '0', 'yes', 'no'].includes(enabledRaw)) throw new ConfigError('RECONCILE_ENABLED must be true or false');
  const scheduleSeconds = parseDunningPlan(text(env, 'RECONCILE_SCHEDULE', '1m,5m,15m,60m,1d,1d,1d,1d,1d,1d,1d')!);
  if (!scheduleSeconds) throw new ConfigError('RECONCILE_SCHEDULE must be a comma-separated list of waits such as 1m,5m,15m,60m,1d');
  return {
    enabled: ['true', '1', 'yes'].includes(enabledRaw),
    scheduleSeconds,
    batch: integer(env, 'RECONCILE_BATCH', 100, 1, 10_000),
    maxPerSecond: integer(env, 'RECONCILE_MAX_PER_SECOND', 5, 1, 100),
    intervalSeconds: integer(env, 'RECONCILE_INTERVAL_SECONDS', 30, 1, 86_400),
  };
}

function cardExpiryReminderConfig(env: Env): CardExpiryReminderConfig {
  return {
    days: integer(env, 'CARD_EXPIRY_REMINDER_DAYS', 30, 0, 365),
    intervalSeconds: integer(env, 'CARD_EXPIRY_REMINDER_INTERVAL_SECONDS', 86_400, 1, 30 * 86_400),
    maxPerSecond: integer(env, 'CARD_EXPIRY_REMINDER_MAX_PER_SECOND', 5, 1, 100),
  };
}

/** Each entry is an IP address or a CIDR range (IPv4 or IPv6). */
function addressList(env: Env, name: string, fallback: string): string[] {
  const entries = (text(env, name, fallback) ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = net.isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits))) {
      throw new ConfigError(`${name} must be a comma-separated list of IP addresses or CIDR ranges`);
    }
  }
  return entries;
}

/** `dotEnv`: the variables `.env` set, which Node itself did not see at start. */
export function loadConfig(environment: Env = process.env, dotEnv: ReadonlySet<string> = new Set()): Config {
  const { env, notices } = withWpConfigFile(environment);
  const prefix = text(env, 'DB_TABLE_PREFIX', 'wp_')!;
  if (!/^[A-Za-z0-9_]+$/.test(prefix)) {
    throw new ConfigError('DB_TABLE_PREFIX may hold only letters, digits and underscores', 'set DB_TABLE_PREFIX to $table_prefix from the shop\'s wp-config.php (such as wp_)');
  }
  const dbName = required(env, 'DB_NAME');
  if (!/^[A-Za-z0-9_$-]+$/.test(dbName)) throw new ConfigError('DB_NAME may hold only letters, digits, _, $ and -');

  const { tlsCertFile, tlsKeyFile } = tlsFiles(env);

  const dunningRaw = text(env, 'DUNNING_PLAN', '12h,12h,1d,2d,3d')!;
  const dunningPlanSeconds = parseDunningPlan(dunningRaw);
  if (!dunningPlanSeconds) throw new ConfigError('DUNNING_PLAN must be a comma-separated list of waits such as 12h,1d,2d');

  const reconcile = reconcileConfig(env);

  const siteExtensions = text(env, 'SITE_EXTENSIONS');
  if (siteExtensions !== undefined && !fs.existsSync(siteExtensions)) {
    throw new ConfigError('SITE_EXTENSIONS names a module file that does not exist');
  }

  // One setting for reads and writes alike: the gateway documents the same number in flight for each.
  const cardGatewayInFlight = integer(env, 'CARD_GATEWAY_MAX_CONCURRENT_REQUESTS', CARD_GATEWAY_LIMITS.reads.concurrent, 1, 1000);

  return {
    db: {
      ...databaseAddress(env),
      charset: databaseCharset(env),
      user: text(env, 'DB_USER', 'root')!,
      password: env.DB_PASSWORD ?? '',
      name: dbName,
      tablePrefix: prefix,
      statementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', DEFAULT_STATEMENT_TIMEOUT_MS, 3000, 600_000),
    },
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379')!,
    http: {
      host: text(env, 'HOST', '127.0.0.1')!,
      port: integer(env, 'PORT', 8080, 0, 65535),
      tlsCertFile,
      tlsKeyFile,
      trustedProxies: addressList(env, 'TRUSTED_PROXIES', '127.0.0.1,::1'),
      metricsAllowed: addressList(env, 'METRICS_ALLOWED', '127.0.0.1,::1'),
      heapGrowthPercent: integer(env, 'API_HEAP_GROWTH_PERCENT', 100, 0, 400),
      dbStatementTimeoutMs: integer(env, 'API_DB_STATEMENT_TIMEOUT_MS', 4000, 1000, 60_000),
    },
    helpdesk: {
      apiKey: text(env, 'HELPDESK_API_KEY'),
      apiSecret: text(env, 'HELPDESK_API_SECRET'),
      throttle: {
        maxFailures: integer(env, 'HELPDESK_THROTTLE_MAX_FAILURES', 10, 1, 1_000_000),
        windowSeconds: integer(env, 'HELPDESK_THROTTLE_WINDOW_SECONDS', 900, 1, 31_536_000),
        blockSeconds: integer(env, 'HELPDESK_THROTTLE_BLOCK_SECONDS', 900, 1, 31_536_000),
      },
      cardToken: text(env, 'HELPDESK_CARD_TOKEN'),
      cardAllowFrom: addressList(env, 'HELPDESK_CARD_ALLOW_FROM', ''),
    },
    shopUrl: url(env, 'SHOP_URL'),
    wordpressSecrets: {
      loggedInKey: text(env, 'WP_LOGGED_IN_KEY'),
      loggedInSalt: text(env, 'WP_LOGGED_IN_SALT'),
      nonceKey: text(env, 'WP_NONCE_KEY'),
      nonceSalt: text(env, 'WP_NONCE_SALT'),
    },
    cardGateway: {
      apiUrl: url(env, 'CARD_GATEWAY_API_URL', 'https://api.reepay.com')!,
      apiKey: text(env, 'CARD_GATEWAY_API_KEY'),
      webhookSecret: text(env, 'CARD_GATEWAY_WEBHOOK_SECRET'),
      limits: {
        reads: {
          concurrent: cardGatewayInFlight,
          perSecond: integer(env, 'CARD_GATEWAY_MAX_READS_PER_SECOND', CARD_GATEWAY_LIMITS.reads.perSecond, 1, 100_000),
        },
        writes: {
          concurrent: cardGatewayInFlight,
          perSecond: integer(env, 'CARD_GATEWAY_MAX_WRITES_PER_SECOND', CARD_GATEWAY_LIMITS.writes.perSecond, 1, 100_000),
        },
      },
    },
    mobileWallet: {
      apiUrl: url(env, 'MOBILE_WALLET_API_URL', 'https://api.vipps.no')!,
      clientId: text(env, 'MOBILE_WALLET_CLIENT_ID'),
      clientSecret: text(env, 'MOBILE_WALLET_CLIENT_SECRET'),
      subscriptionKey: text(env, 'MOBILE_WALLET_SUBSCRIPTION_KEY'),
      merchantSerialNumber: text(env, 'MOBILE_WALLET_MSN'),
      webhookUrl: url(env, 'MOBILE_WALLET_WEBHOOK_URL'),
      webhookSecret: text(env, 'MOBILE_WALLET_WEBHOOK_SECRET'),
    },
    dunningPlanSeconds,
    dunning: dunningConfig(env),
    workerStallSeconds: integer(env, 'WORKER_STALL_SECONDS', 60, 1, 86_400),
    reconcile,
    cardExpiryReminders: cardExpiryReminderConfig(env),
    preRenewalCheck: {
      days: integer(env, 'PRE_RENEWAL_CHECK_DAYS', 3, 0, 60),
      intervalSeconds: integer(env, 'PRE_RENEWAL_CHECK_INTERVAL_SECONDS', 3600, 1, 86_400),
    },
    customerIndex: { sweepSeconds: integer(env, 'CUSTOMER_INDEX_SWEEP_SECONDS', 86_400, 0, 30 * 86_400) },
    siteExtensions,
    extraCertificateAuthorities: dotEnv.has('NODE_EXTRA_CA_CERTS') ? certificateAuthorities(env, 'NODE_EXTRA_CA_CERTS') : [],
    notices,
  };
}

/** The PEM certificates of the file `name` names. A file without one stops the start: Node would only warn, and go on without it. */
function certificateAuthorities(env: Env, name: string): string[] {
  const file = readableFile(env, name);
  if (file === undefined) return [];
  const blocks = fs.readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    for (const block of blocks) new crypto.X509Certificate(block);
  } catch {
    throw new ConfigError(`${name} names a file with a certificate that cannot be read`);
  }
  if (!blocks.length) throw new ConfigError(`${name} names a file with no PEM certificate`);
  return blocks.map((block) => `${block}\n`);
}

/**
 * The environment, completed from the shop's wp-config.php when WP_CONFIG_FILE names it: every value WordPress
 * itself uses that the environment does not set. What the file sets with an expression (it cannot be known
 * without running PHP) is named in a notice, unless the environment sets it.
 */
function withWpConfigFile(environment: Env): { env: Env; notices: string[] } {
  const file = text(environment, 'WP_CONFIG_FILE');
  if (file === undefined) return { env: environment, notices: [] };
  const read = wpConfigSettings(file, environment);
  if (!read) throw new ConfigError('WP_CONFIG_FILE names a file that cannot be read');
  const env: Env = { ...read.values };
  for (const [name, value] of Object.entries(environment)) if (value !== undefined && value !== '') env[name] = value;
  const notices = read.unreadable.length
    ? [`WP_CONFIG_FILE: could not read ${read.unreadable.join(', ')} without running PHP; set the matching variable in the environment`]
    : [];
  return { env, notices };
}

/** Where the database is: DB_HOST in any form WordPress accepts (host, host:port, [IPv6]:port, localhost:/socket), DB_PORT winning over its port. */
function databaseAddress(env: Env): Pick<Config['db'], 'host' | 'port' | 'socketPath' | 'tls'> {
  const raw = text(env, 'DB_HOST', '127.0.0.1')!;
  const parsed = parseDbHost(raw);
  if (!parsed) throw new ConfigError('DB_HOST must be a host, host:port, [IPv6 address]:port or localhost:/path/to/socket');
  // WordPress reads as much of a port as is digits (`127.0.0.1:33o6` is port 33); a typo must not lead elsewhere.
  const written = writtenPort(raw);
  if (written !== undefined && !(/^\d+$/.test(written) && Number(written) >= 1 && Number(written) <= 65535)) {
    throw new ConfigError(`DB_HOST's port must be a whole number from 1 to 65535 (DB_HOST is host:port, e.g. 127.0.0.1:3306), not "${written}"`);
  }
  const port = text(env, 'DB_PORT') !== undefined ? integer(env, 'DB_PORT', 3306, 1, 65535) : parsed.port ?? 3306;
  // As mysqli does: `localhost` with neither port nor socket means the server's default socket.
  const socketPath = parsed.socket ?? (parsed.host === 'localhost' && parsed.port === null && text(env, 'DB_PORT') === undefined ? defaultSocket() : undefined);
  const flags = clientFlags(env);
  const caFile = readableFile(env, 'DB_SSL_CA');
  const tls = (flags & MYSQLI_CLIENT_FLAGS.MYSQLI_CLIENT_SSL) || caFile ? { caFile, verify: !(flags & MYSQLI_CLIENT_FLAGS.MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT) } : undefined;
  return { host: parsed.host || 'localhost', port, ...(socketPath ? { socketPath } : {}), ...(tls ? { tls } : {}) };
}

/**
 * The port DB_HOST names, as written (digits or not): what follows the host's colon, or the `]` of an IPv6 address;
 * undefined when it names none (a host alone, a bare IPv6 address, `localhost:/path/to/socket`).
 */
function writtenPort(dbHost: string): string | undefined {
  const socketAt = dbHost.indexOf(':/');
  const host = socketAt >= 0 ? dbHost.slice(0, socketAt) : dbHost;
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    if (close < 0) return undefined;
    const rest = host.slice(close + 1);
    return rest === '' ? undefined : rest.startsWith(':') ? rest.slice(1) : rest;
  }
  const colons = (host.match(/:/g) ?? []).length;
  if (colons !== 1) return undefined;
  return host.slice(host.indexOf(':') + 1);
}

/** Where Debian, Red Hat and source builds put the server's socket; the first that exists. */
function defaultSocket(): string | undefined {
  return ['/run/mysqld/mysqld.sock', '/var/run/mysqld/mysqld.sock', '/var/lib/mysql/mysql.sock', '/tmp/mysql.sock'].find((file) => fs.existsSync(file));
}

/** MYSQL_CLIENT_FLAGS as WordPress passes it to mysqli: a number, or mysqli's flag names joined by `|`. */
function clientFlags(env: Env): number {
  const raw = text(env, 'MYSQL_CLIENT_FLAGS');
  if (raw === undefined) return 0;
  let flags = 0;
  for (const part of raw.split('|').map((word) => word.trim())) {
    if (/^\d+$/.test(part)) flags |= Number(part);
    else if (part in MYSQLI_CLIENT_FLAGS) flags |= MYSQLI_CLIENT_FLAGS[part];
    else throw new ConfigError(`MYSQL_CLIENT_FLAGS must be a number or mysqli flag names joined by | (${Object.keys(MYSQLI_CLIENT_FLAGS).join(', ')})`);
  }
  return flags;
}

/** WordPress's `utf8` means utf8mb4 wherever the server has it (wpdb::determine_charset), as every supported server does. */
function databaseCharset(env: Env): string {
  const charset = text(env, 'DB_CHARSET', 'utf8mb4')!.toLowerCase();
  if (!/^[a-z0-9_]+$/.test(charset)) throw new ConfigError('DB_CHARSET must be a character set name such as utf8mb4');
  return charset === 'utf8' ? 'utf8mb4' : charset;
}

/** What `.env` gave this process; read on the first call, so every command and process reads it once, the same way. */
interface DotEnv {
  /** The variables it set. */
  names: ReadonlySet<string>;
  /** Whether the working directory has one (`folder`, as an absolute path). */
  found: boolean;
  folder: string;
  /** Why it could not be read, when it could not. */
  unreadable?: string;
}
let dotEnvRead: DotEnv | undefined;

/** `.env` from the working directory, when present, into the environment; a variable already set there wins. */
function loadDotEnv(): DotEnv {
  if (dotEnvRead) return dotEnvRead;
  const launched = { ...process.env };
  const folder = process.cwd();
  const found = fs.existsSync('.env');
  let unreadable: string | undefined;
  if (found) {
    try {
      // Asked first: Node's own reading says ENOENT for a file it may not read.
      fs.accessSync('.env', fs.constants.R_OK);
      process.loadEnvFile('.env');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      unreadable = code === 'EACCES' ? 'permission denied: run it as the user the service runs as, who owns .env' : error instanceof Error ? error.message : String(error);
    }
    Object.assign(process.env, launched);
  }
  dotEnvRead = { names: new Set(Object.keys(process.env).filter((name) => !(name in launched))), found, folder, unreadable };
  return dotEnvRead;
}

/** A missing setting's line, with where `.env` was looked for when there was none: the likeliest cause is the folder. */
function withDotEnvHint(error: ConfigError, dotEnv: DotEnv): string {
  if (!(error instanceof MissingSettingError) || dotEnv.found) return error.message;
  return `${error.message}, and there is no .env in ${dotEnv.folder}: run it from the service's folder (where its .env is), or set the variables in the environment`;
}

export type ConfigReading = { ok: true; config: Config } | { ok: false; problem: string; fix?: string };

/** The one line that says why the configuration cannot be used. */
export function configurationErrorLine(problem: string): string {
  return `configuration error: ${problem}`;
}

/** The line of a setting that cannot run, found by trying it (the start check, a process's start): the setting, what was found, the fix. */
export function settingRefusedLine(refusal: { setting: string; detail: string; fix: string }): string {
  return configurationErrorLine(`${refusal.setting}: ${refusal.detail}. Fix: ${refusal.fix}`);
}

/**
 * The configuration of this process, as every entry point reads it: `.env` first, then the environment and
 * WP_CONFIG_FILE. Certificate authorities that `.env` names (NODE_EXTRA_CA_CERTS) are trusted from here on.
 */
export function readConfig(): ConfigReading {
  const dotEnv = loadDotEnv();
  if (dotEnv.unreadable) {
    return { ok: false, problem: `.env in ${dotEnv.folder} cannot be read: ${dotEnv.unreadable}` };
  }
  let config: Config;
  try {
    config = loadConfig(process.env, dotEnv.names);
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, problem: withDotEnvHint(error, dotEnv), ...(error.fix ? { fix: error.fix } : {}) };
    throw error;
  }
  if (config.extraCertificateAuthorities.length) trustCertificateAuthorities(config.extraCertificateAuthorities);
  return { ok: true, config };
}

/** `readConfig`, or one line on stderr naming what is wrong and exit 1; notices about WP_CONFIG_FILE are said once. */
export function loadConfigOrExit(): Config {
  const reading = readConfig();
  if (!reading.ok) {
    process.stderr.write(`${configurationErrorLine(reading.problem)}\n`);
    process.exit(1);
  }
  for (const notice of reading.config.notices) process.stderr.write(`configuration: ${notice}\n`);
  return reading.config;
}
