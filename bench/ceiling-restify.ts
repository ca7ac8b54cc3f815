import crypto from 'node:crypto';
import mysql from 'mysql2/promise';
import restify from 'restify';
import { ORDER_STATUS_READS } from './ceiling-reads';

/**
 * The floor issue 52 measures the order status route against: a bare restify + mysql2 program, the framework the
 * service runs on and nothing of the service's own (configuration, throttling, contracts, metrics, logging,
 * response building). It makes the same reads as the bare node:http program (bench/ceiling.ts), one order per
 * request, and the same constant-time email comparison.
 */
const p = process.env.DB_TABLE_PREFIX ?? 'wp_';
const pool = mysql.createPool({ host: '127.0.0.1', user: 'root', database: process.env.DB_NAME, connectionLimit: 10, dateStrings: true, multipleStatements: true, trace: false });
const sql = ORDER_STATUS_READS(p);
const digest = (text: string) => crypto.createHash('sha256').update(String(text).toLowerCase()).digest();

const server = restify.createServer({ handleUncaughtExceptions: false });
server.use(restify.plugins.bodyParser({ maxBodySize: 8 * 1024, mapParams: false }));
server.post('/helpdesk/v1/order-status', async (req: restify.Request, res: restify.Response) => {
  const body = (req.body ?? {}) as { order_number?: string; email?: string };
  const id = Number(body.order_number) || 0;
  const [[rows, meta, items]] = await pool.query<mysql.RowDataPacket[][]>(sql, [[id], [id], [id], [id]]);
  const email = meta.find((row) => row.meta_key === '_billing_email')?.meta_value ?? '';
  const ok = rows.length > 0 && crypto.timingSafeEqual(digest(email), digest(body.email ?? ''));
  if (ok) res.send(200, { order_number: String(id), status: rows[0].status, item_count: items.length });
  else res.send(404, { code: 'order_not_found' });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
