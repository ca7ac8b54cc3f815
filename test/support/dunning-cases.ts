import type mysql from 'mysql2/promise';

/** One row of sidecar_dunning_cases as a test writes it, times in days before `now`. */
export interface SeedCase {
  subscription: number;
  provider: 'card_gateway' | 'mobile_wallet';
  reason: string;
  currency: string;
  /** The renewal's total, minor units. */
  amount: number;
  opened: number;
  status: 'OPEN' | 'RECOVERED' | 'LOST';
  attempts: number;
  closed?: number;
  means?: string;
  /** What was paid, minor units. */
  recovered?: number;
  /** The holdout's arm; `service` when not given (the column's default). */
  arm?: 'service' | 'baseline';
}

const DAY = 86_400_000;
const gmt = (time: number) => new Date(time).toISOString().slice(0, 23).replace('T', ' ');

/**
 * Writes dunning cases straight into the table, as the dunning code would have (order ids from `firstOrder` on).
 * Columns these tests do not know of (the table may gain some) that need a value are given 0, so the history
 * stays the same whatever else a row carries.
 */
export async function insertDunningCases(db: mysql.Pool, prefix: string, cases: SeedCase[], now: number, firstOrder: number): Promise<void> {
  const table = `${prefix}sidecar_dunning_cases`;
  const [columns] = await db.query(`SHOW COLUMNS FROM ${table}`) as unknown as [{ Field: string; Null: string; Default: unknown; Extra: string }[]];
  const rows = cases.map((c, i): Record<string, unknown> => ({
    order_id: firstOrder + i, subscription_id: c.subscription, provider: c.provider, method_key: `${c.provider}:test:${c.subscription}`,
    currency: c.currency, amount_minor: c.amount, first_reason: c.reason, policy: 'retry', status: c.status, attempts: c.attempts,
    opened_at: gmt(now - c.opened * DAY), closed_at: c.closed === undefined ? null : gmt(now - c.closed * DAY),
    recovered_by: c.means ?? null, recovered_amount_minor: c.recovered ?? null, updated_at: gmt(now), ...(c.arm ? { arm: c.arm } : {}),
  }));
  const names = Object.keys(rows[0]);
  for (const column of columns) {
    if (!names.includes(column.Field) && column.Null === 'NO' && column.Default === null && !column.Extra.includes('auto_increment')) names.push(column.Field);
  }
  for (let start = 0; start < rows.length; start += 500) {
    const values = rows.slice(start, start + 500).map((row) => names.map((name) => row[name] ?? (name in row ? null : 0)));
    await db.query(`INSERT INTO ${table} (${names.join(', ')}) VALUES ?`, [values]);
  }
}
