import type { Provider } from '../entities';
import { loadConfig, type DunningConfig } from '../src/config';
import { decideOnDecline, earliestWithinCaps, isLackOfFunds, type ChargeCaps, type Decline } from '../src/dunning/decline-policy';
import { paydayAttemptTime } from '../src/dunning/dunning';
import { BASELINE_PLAN_SECONDS } from '../src/dunning/holdout';
import { walletRetryDays, walletRetryDaysWanted } from '../src/dunning/charge-rules/mobile-wallet-charges';
import { nextPaydayMorning, type Paydays } from '../src/shop/danish-bank-calendar';
import type { ShopTimeZone } from '../src/shop/shop-time';

/**
 * The recovery benchmark's model (issue 45; `npm run bench:recovery`, bench/recovery.ts): a year of synthetic failed
 * renewals replayed through the service's own decision code with a pinned clock, on three retry plans. It is a model,
 * not a measurement: the holdout (DUNNING_HOLDOUT_PERCENT, docs/payments.md) is the shop's real measure.
 *
 * Reused as is: the decline policy (decideOnDecline, isLackOfFunds), the caps (earliestWithinCaps with the configured
 * defaults), the payday morning (nextPaydayMorning on DUNNING_PAYDAYS), the wallet's own retry window
 * (walletRetryDays), the baseline's timing (BASELINE_PLAN_SECONDS) and the configuration's defaults (loadConfig).
 * Restated here, because it lives in a repository and a class bound to the database: how one failure plans the next
 * attempt (RetryRepository.scheduleNext: the plan's next wait from the failure, the payday attempt instead when it comes
 * sooner within the caps or the plan is used up, never after its `until`; Dunning.paydayAttempt's `until`; the
 * customer's deadline, DUNNING_CUSTOMER_DAYS after being asked). The model does not change any of it.
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Dunning.paydayAttempt's shop-local time (src/dunning/dunning.ts, PAYDAY_TIME). */
const PAYDAY_TIME = '00:15';
/** How far ahead the service's wallet charge is due (src/dunning/charge-rules/mobile-wallet-charges.ts, DUE_IN_DAYS). */
const WALLET_DUE_IN_DAYS = 2;
/** The hour (UTC) of the wallet's own daily tries of a due charge: its batch runs in the early morning. A model's simplification. */
const WALLET_TRY_HOUR_UTC = 3;
/** Every plan is judged over the same window from the first failure. */
export const WINDOW_DAYS = 28;
const ZONE: ShopTimeZone = { kind: 'iana', name: 'Europe/Copenhagen' };

/** One retry plan of the comparison: waits of the soft plan, and whether a decline for lack of funds gets the payday attempt. */
export interface RetryPlanModel {
  name: string;
  softPlanSeconds: readonly number[];
  payday: boolean;
  what: string;
}

/** Stripe's recommended default for Smart Retries, "8 tries within 2 weeks", as eight evenly spaced waits (Stripe spaces them by its model). */
export const STRIPE_LIKE_PLAN_SECONDS: number[] = Array.from({ length: 8 }, () => (14 * 86_400) / 8);

export function plansOf(servicePlanSeconds: readonly number[]): RetryPlanModel[] {
  return [
    { name: 'baseline', softPlanSeconds: BASELINE_PLAN_SECONDS, payday: false, what: 'WooCommerce Subscriptions default timing (12h,12h,1d,2d,3d), no payday attempt' },
    { name: 'stripe-like', softPlanSeconds: STRIPE_LIKE_PLAN_SECONDS, payday: false, what: '8 tries evenly within 14 days (Stripe Smart Retries default count and span)' },
    { name: 'service', softPlanSeconds: servicePlanSeconds, payday: true, what: 'DUNNING_PLAN default plus the payday attempt for lack of funds' },
  ];
}

/** A deterministic PRNG (mulberry32): the same seed gives the same year. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The model's assumptions, each with its value and source; "model's guess" where no source gives a number. */
export interface Assumption { assumption: string; value: string; source: string }

export const MODEL = {
  cardShare: 0.75,
  card: { insufficientFunds: 0.55, hard: 0.30, processing: 0.15, expiredOfHard: 0.6 },
  wallet: { userAction: 0.85, technical: 0.15 },
  funds: { nextPayday: 0.6, earlier: 0.2, earlierMaxDays: 10 },
  walletFix: { afterDays: 0.55, maxDays: 10, onPayday: 0.2 },
  hardUpdate: { share: 0.5, maxDays: 7 },
  emailAnswer: { share: 0.4, maxDays: 5 },
  processingSuccess: 0.9,
  amountsDkk: [99, 149, 199, 249, 349],
};

export function assumptions(config: DunningConfig, servicePlanSeconds: readonly number[]): Assumption[] {
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const guess = "model's guess";
  const m = MODEL;
  return [
    { assumption: 'Failed renewals', value: 'spread evenly over 2026, any hour; amounts 99–349 kr.', source: guess },
    { assumption: 'Provider', value: `card ${pct(m.cardShare)}, wallet ${pct(1 - m.cardShare)}`, source: `${guess} (issue 45)` },
    { assumption: 'Card declines', value: `insufficient funds ${pct(m.card.insufficientFunds)}, hard (expired/replaced card) ${pct(m.card.hard)}, processing error ${pct(m.card.processing)}`, source: guess },
    { assumption: 'Wallet declines', value: `user_action_required ${pct(m.wallet.userAction)}, technical_error ${pct(m.wallet.technical)}`, source: `${guess}; reasons: vipps-recurring-api recurring-api-guide.md, "Charge failure reasons"` },
    { assumption: 'Salaries arrive on the last bank day, from 00:00', value: 'DUNNING_PAYDAYS=last-bank-day, Danish bank days', source: 'Danish payroll practice; bank closing days: Danmarks Nationalbank, "Banklukkedage" (src/shop/danish-bank-calendar.ts)' },
    { assumption: 'Lack of funds: money arrives', value: `on the next payday ${pct(m.funds.nextPayday)}, earlier (1–${m.funds.earlierMaxDays} d) ${pct(m.funds.earlier)}, not within the window ${pct(1 - m.funds.nextPayday - m.funds.earlier)}`, source: `${guess}; payday timing matters: Stripe Smart Retries ("the best time to pay … 12:01 AM in local time zones", docs.stripe.com/billing/revenue-recovery/smart-retries), vendors' payday-retry claims (e.g. ProfitWell/Paddle, Chargeblast blog), none with a Danish figure` },
    { assumption: 'Expired or replaced card', value: `recovers only when the customer saves a new card after the e-mail: ${pct(m.hardUpdate.share)} within 0–${m.hardUpdate.maxDays} d, the rest never`, source: `${guess}; hard declines are not retried: the decline policy (src/dunning/decline-policy.ts), as Stripe ("hard decline code") and Recurly do` },
    { assumption: 'Wallet: customer fixes it in the app', value: `after 1–${m.walletFix.maxDays} d ${pct(m.walletFix.afterDays)}, on payday ${pct(m.walletFix.onPayday)}, never ${pct(1 - m.walletFix.afterDays - m.walletFix.onPayday)}`, source: guess },
    { assumption: "Wallet retries the service's charge itself", value: `daily from its due date (${WALLET_DUE_IN_DAYS} d ahead) for retryDays (14 for an attempt of the plan, never past the customer's deadline)`, source: 'vipps-recurring-api recurring-api-guide.md, "Charge retries" (src/dunning/charge-rules/mobile-wallet-charges.ts)' },
    { assumption: 'Processing / technical error', value: `each attempt succeeds ${pct(m.processingSuccess)}`, source: guess },
    { assumption: 'Customer asked by e-mail (plan used up)', value: `${pct(m.emailAnswer.share)} save a new method 0–${m.emailAnswer.maxDays} d later, once they have the money; charged at once`, source: guess },
    { assumption: 'Caps on one payment method', value: `${config.caps.perDay} a day, ${config.caps.per30Days} in 30 days`, source: 'config defaults; Visa 20 reattempts in 30 days, Mastercard 10 in 24 h (src/config.ts)' },
    { assumption: 'Baseline plan', value: '12h,12h,1d,2d,3d', source: 'WooCommerce Subscriptions 7.9.0 default retry rules (src/dunning/holdout.ts)' },
    { assumption: 'Stripe-like plan', value: '8 tries within 14 days, evenly', source: 'Stripe: "The recommended default is 8 tries within 2 weeks" (docs.stripe.com/payments/off-session-payments/smart-retries); its ML timing is not modelled' },
    { assumption: 'Service plan', value: `${planText(servicePlanSeconds)} + payday attempt; processing ${planText(config.processingPlanSeconds)}; customer ${config.customerDays} d`, source: 'DUNNING_PLAN, DUNNING_PROCESSING_PLAN, DUNNING_CUSTOMER_DAYS defaults (src/config.ts)' },
    { assumption: 'Window', value: `${WINDOW_DAYS} days from the failure`, source: "the holdout's 28-day recovered share (docs/payments.md)" },
    { assumption: 'What retries can reach', value: 'industry: optimized retries 53% → 71% recovered; 90% of recoveries within 10 days', source: 'Recurly, "The case for smarter failed payment recovery" (recurly.com/blog, 2026): a comparison point, not an input' },
  ];
}

function planText(seconds: readonly number[]): string {
  return seconds.map((s) => (s % 86_400 === 0 ? `${s / 86_400}d` : s % 3600 === 0 ? `${s / 3600}h` : `${Math.round(s / 3600)}h`)).join(',');
}

export type Kind = 'card_funds' | 'card_hard' | 'card_processing' | 'wallet_action' | 'wallet_technical';

/** One synthetic failed renewal and its customer's behaviour (times in ms; null: never within the window). */
export interface FailedRenewal {
  at: number;
  amountMinor: number;
  provider: Provider;
  kind: Kind;
  decline: Decline;
  /** When the money is there (lack of funds) or the app is fixed (wallet); for a hard decline, null. */
  readyAt: number | null;
  /** Days after the e-mail the customer saves a new method (once ready); null: never. */
  answerDays: number | null;
  /** One uniform draw per attempt, for processing errors. */
  luck: number[];
}

export function generate(count: number, seed: number, paydays: Paydays): FailedRenewal[] {
  const random = prng(seed);
  const start = Date.UTC(2026, 0, 1);
  const span = Date.UTC(2027, 0, 1) - start;
  const m = MODEL;
  const renewals: FailedRenewal[] = [];
  for (let i = 0; i < count; i += 1) {
    const at = start + Math.floor(random() * span);
    const amountMinor = m.amountsDkk[Math.floor(random() * m.amountsDkk.length)]! * 100;
    const provider: Provider = random() < m.cardShare ? 'card_gateway' : 'mobile_wallet';
    const reason = random();
    const payday = nextPaydayMorning(new Date(at), ZONE, paydays, '00:00')!.getTime();
    const behaviour = random();
    const days = random();
    const answer = random();
    const answerDays = answer < m.emailAnswer.share ? (answer / m.emailAnswer.share) * m.emailAnswer.maxDays : null;
    const luck = Array.from({ length: 40 }, () => random());
    let kind: Kind;
    let decline: Decline;
    let readyAt: number | null = null;
    let answerOf = answerDays;
    if (provider === 'card_gateway') {
      if (reason < m.card.insufficientFunds) {
        kind = 'card_funds';
        decline = { code: 'insufficient_funds', state: 'soft_declined' };
        if (behaviour < m.funds.nextPayday) readyAt = payday;
        else if (behaviour < m.funds.nextPayday + m.funds.earlier) readyAt = at + (1 + days * (m.funds.earlierMaxDays - 1)) * DAY_MS;
      } else if (reason < m.card.insufficientFunds + m.card.hard) {
        kind = 'card_hard';
        decline = { code: days < m.card.expiredOfHard ? 'credit_card_expired' : 'declined_by_acquirer', state: 'hard_declined' };
        answerOf = behaviour < m.hardUpdate.share ? (behaviour / m.hardUpdate.share) * m.hardUpdate.maxDays : null;
        readyAt = at;
      } else {
        kind = 'card_processing';
        decline = { code: 'acquirer_communication_error', state: 'processing_error' };
        readyAt = at;
      }
    } else if (reason < m.wallet.userAction) {
      kind = 'wallet_action';
      decline = { code: 'user_action_required', state: null };
      if (behaviour < m.walletFix.afterDays) readyAt = at + (1 + days * (m.walletFix.maxDays - 1)) * DAY_MS;
      else if (behaviour < m.walletFix.afterDays + m.walletFix.onPayday) readyAt = payday;
    } else {
      kind = 'wallet_technical';
      decline = { code: 'technical_error', state: null };
      readyAt = at;
    }
    renewals.push({ at, amountMinor, provider, kind, decline, readyAt, answerDays: answerOf, luck });
  }
  return renewals.sort((a, b) => a.at - b.at);
}

/** What one plan did with one failed renewal. */
export interface Outcome { recoveredAt: number | null; attempts: number; breaches: number }

/** Charges of one payment method over the caps, counted independently of earliestWithinCaps: each charge with the ones before it. */
export function capBreaches(charges: readonly number[], caps: ChargeCaps): number {
  const times = [...charges].sort((a, b) => a - b);
  let breaches = 0;
  times.forEach((t, i) => {
    const before = times.slice(0, i + 1);
    if (before.filter((x) => x > t - DAY_MS).length > caps.perDay || before.filter((x) => x > t - 30 * DAY_MS).length > caps.per30Days) breaches += 1;
  });
  return breaches;
}

export function simulate(renewal: FailedRenewal, plan: RetryPlanModel, config: DunningConfig): Outcome {
  const windowEnd = renewal.at + WINDOW_DAYS * DAY_MS;
  const charges: number[] = [renewal.at]; // the failed renewal itself counts against the caps
  const counts: Record<string, number> = {};
  let attempts = 0;
  const asked: { at: number | null; deadline: number | null } = { at: null, deadline: null };
  let now = renewal.at;
  let decline = renewal.decline;
  let recoveredAt: number | null = null;
  const ready = (t: number) => renewal.readyAt !== null && t >= renewal.readyAt;
  const ask = (t: number) => {
    if (asked.at !== null) return;
    asked.at = t;
    asked.deadline = t + config.customerDays * DAY_MS;
  };
  const withinCaps = (t: number) => earliestWithinCaps(new Date(t), charges.map((c) => new Date(c)), config.caps).getTime();
  for (let step = 0; step < 60 && recoveredAt === null; step += 1) {
    const decision = decideOnDecline(renewal.provider, decline);
    if (!decision.plan) { ask(now); break; }
    const planSeconds = decision.plan === 'soft' ? plan.softPlanSeconds : config.processingPlanSeconds;
    const ofPlan = counts[decision.plan] ?? 0;
    const plannedFor = ofPlan < planSeconds.length ? now + planSeconds[ofPlan]! * 1000 : null;
    let at: number | null = null;
    let kind: string = decision.plan;
    // Dunning.paydayAttempt and RetryRepository.scheduleNext's `instead`.
    if (plan.payday && decision.plan === 'soft' && isLackOfFunds(renewal.provider, decline)) {
      const morning = nextPaydayMorning(new Date(now), ZONE, config.paydays, PAYDAY_TIME);
      // A wallet's attempt is made ahead of payday, so that its charge falls due then (Dunning's paydayAttemptTime).
      const wanted = morning ? paydayAttemptTime(renewal.provider, morning, new Date(now)).getTime() : undefined;
      const until = asked.deadline ?? renewal.at + planSeconds.reduce((sum, s) => sum + s * 1000, 0) + config.customerDays * DAY_MS;
      if (wanted !== undefined && wanted < until && (plannedFor === null || wanted < plannedFor)) {
        const capped = withinCaps(wanted);
        if (capped <= until && (plannedFor === null || capped < plannedFor)) { at = capped; kind = 'payday'; }
      }
    }
    if (at === null) {
      if (plannedFor === null) { ask(now); break; }
      at = withinCaps(plannedFor);
    } else if (plannedFor === null) {
      ask(now); // the plan is used up: the customer is asked besides the payday attempt
    }
    if (at > windowEnd || (asked.deadline !== null && at > asked.deadline)) break;
    charges.push(at);
    attempts += 1;
    counts[kind] = (counts[kind] ?? 0) + 1;
    const processing = renewal.kind === 'card_processing' || renewal.kind === 'wallet_technical';
    if (renewal.provider === 'card_gateway') {
      if (processing ? renewal.luck[attempts]! < MODEL.processingSuccess : ready(at)) { recoveredAt = at; break; }
      now = at;
      continue;
    }
    // The wallet takes the charge on its due date and retries it itself daily through retryDays (walletRetryDays).
    const due = new Date(at + WALLET_DUE_IN_DAYS * DAY_MS).toISOString().slice(0, 10);
    const retryDays = walletRetryDays(due, walletRetryDaysWanted(kind === 'payday' ? 'payday' : decision.plan), asked.deadline === null ? null : new Date(asked.deadline));
    const dueMs = Date.parse(`${due}T00:00:00Z`);
    for (let day = 0; day <= retryDays && recoveredAt === null; day += 1) {
      const tryAt = dueMs + day * DAY_MS + WALLET_TRY_HOUR_UTC * HOUR_MS;
      if (tryAt > windowEnd || (asked.deadline !== null && tryAt > asked.deadline)) break;
      if (processing ? renewal.luck[attempts]! < MODEL.processingSuccess : ready(tryAt)) recoveredAt = tryAt;
    }
    if (recoveredAt !== null) break;
    // Final after the window (walletRetryWindowEnd); a charge the wallet retried itself carries `wallet_retried`.
    now = dueMs + (retryDays + 1) * DAY_MS;
    decline = { code: decline.code, state: retryDays > 0 ? 'wallet_retried' : null };
  }
  // The customer asked saves a new payment method (once they have the money, the app fixed): it is charged at once.
  const { at: askedAt, deadline } = asked;
  if (askedAt !== null && deadline !== null && renewal.answerDays !== null && (renewal.kind === 'card_hard' || renewal.readyAt !== null)) {
    const actAt = Math.max(askedAt + renewal.answerDays * DAY_MS, renewal.kind === 'card_hard' ? 0 : renewal.readyAt!);
    if (actAt <= deadline && actAt <= windowEnd && (recoveredAt === null || actAt < recoveredAt)) {
      // Planned attempts after the new method's charge are cancelled (Dunning.chargeWithNewMethod).
      attempts = charges.filter((c, i) => i > 0 && c < actAt).length + 1;
      charges.splice(0, charges.length, ...charges.filter((c) => c < actAt));
      recoveredAt = actAt;
    }
  }
  return { recoveredAt, attempts, breaches: capBreaches(charges, config.caps) };
}

export interface PlanResult {
  plan: RetryPlanModel;
  renewals: number;
  recovered: number;
  recoveredShare: number;
  attemptsPerRecovery: number;
  medianDaysToRecover: number;
  capBreaches: number;
  /** Failed renewals and those recovered, by the decline's kind. */
  byKind: Partial<Record<Kind, { renewals: number; recovered: number }>>;
}

export interface RecoveryModelResult { count: number; seed: number; plans: PlanResult[]; assumptions: Assumption[]; text: string }

export const MODEL_NOTICE = 'This is a model, not a measurement; the holdout (DUNNING_HOLDOUT_PERCENT) is the shop\'s real measure.';

/** Runs the model: `count` failed renewals over 2026 from `seed`, each through the three plans, on the configuration's defaults. */
export function runRecoveryModel(options: { count?: number; seed?: number } = {}): RecoveryModelResult {
  const count = options.count ?? 10_000;
  const seed = options.seed ?? 45;
  // The defaults only, whatever the environment: the model is pinned.
  const full = loadConfig({ DB_NAME: 'recovery_model' });
  const config = full.dunning;
  const renewals = generate(count, seed, config.paydays);
  const total = renewals.reduce((sum, r) => sum + r.amountMinor, 0);
  const plans = plansOf(full.dunningPlanSeconds).map((plan): PlanResult => {
    let recoveredAmount = 0;
    let attempts = 0;
    let breaches = 0;
    const days: number[] = [];
    const byKind: PlanResult['byKind'] = {};
    for (const renewal of renewals) {
      const outcome = simulate(renewal, plan, config);
      attempts += outcome.attempts;
      breaches += outcome.breaches;
      const kind = byKind[renewal.kind] ??= { renewals: 0, recovered: 0 };
      kind.renewals += 1;
      if (outcome.recoveredAt !== null) {
        kind.recovered += 1;
        recoveredAmount += renewal.amountMinor;
        days.push((outcome.recoveredAt - renewal.at) / DAY_MS);
      }
    }
    days.sort((a, b) => a - b);
    const median = days.length ? (days.length % 2 ? days[(days.length - 1) / 2]! : (days[days.length / 2 - 1]! + days[days.length / 2]!) / 2) : NaN;
    return {
      plan, renewals: count, recovered: days.length, recoveredShare: total ? recoveredAmount / total : 0,
      attemptsPerRecovery: days.length ? attempts / days.length : NaN, medianDaysToRecover: median, capBreaches: breaches, byKind,
    };
  });
  const table = assumptions(config, full.dunningPlanSeconds);
  return { count, seed, plans, assumptions: table, text: render(count, seed, plans, table) };
}

const KIND_NAMES: Record<Kind, string> = {
  card_funds: 'card, insufficient funds',
  card_hard: 'card, expired or hard decline',
  card_processing: 'card, processing error',
  wallet_action: 'wallet, user action required',
  wallet_technical: 'wallet, technical error',
};

function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function render(count: number, seed: number, plans: PlanResult[], table: Assumption[]): string {
  const results = markdownTable(
    ['Plan', 'Recovered share (by amount)', 'Recovered', 'Attempts per recovery', 'Median days to recover', 'Cap breaches'],
    plans.map((p) => [
      p.plan.name, `${(p.recoveredShare * 100).toFixed(1)}%`, `${p.recovered} of ${p.renewals}`, p.attemptsPerRecovery.toFixed(2),
      p.medianDaysToRecover.toFixed(1), String(p.capBreaches),
    ]));
  const planRows = markdownTable(['Plan', 'What it is'], plans.map((p) => [p.plan.name, p.plan.what]));
  const kinds = Object.keys(KIND_NAMES) as Kind[];
  const kindRows = markdownTable(['Recovered, by decline', ...plans.map((p) => p.plan.name)], kinds.map((kind) => [
    `${KIND_NAMES[kind]} (${plans[0]?.byKind[kind]?.renewals ?? 0})`,
    ...plans.map((p) => {
      const k = p.byKind[kind];
      return k && k.renewals ? `${((k.recovered / k.renewals) * 100).toFixed(1)}%` : '–';
    }),
  ]));
  const assumptionRows = markdownTable(['Assumption', 'Value', 'Source'], table.map((a) => [a.assumption, a.value, a.source]));
  return [
    MODEL_NOTICE,
    '',
    `${count} synthetic failed renewals over 2026 (seed ${seed}), each replayed through the service's decline policy, caps and payday calendar on every plan; ${WINDOW_DAYS}-day window.`,
    '',
    results,
    '',
    kindRows,
    '',
    planRows,
    '',
    'Assumptions:',
    '',
    assumptionRows,
    '',
  ].join('\n');
}
