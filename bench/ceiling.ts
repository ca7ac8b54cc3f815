import http from 'node:http';
import crypto from 'node:crypto';
import mysql from 'mysql2/promise';
import { ORDER_STATUS_READS } from './ceiling-reads';

/**
 * The stack's ceiling: a bare node:http + mysql2 program doing the order status route's reads for
 * legacy storage (the order, its meta, and its items and refunds: the same three statements in
 * one round trip, one order per request) and the email comparison, without the framework, configuration, throttling or
 * response building.
 */
const p = process.env.DB_TABLE_PREFIX ?? 'wp_';
const pool = mysql.createPool({ host: '127.0.0.1', user: 'root', database: process.env.DB_NAME, connectionLimit: 10, dateStrings: true, multipleStatements: true, trace: false });
const sql = ORDER_STATUS_READS(p);

const digest = (text: string) => crypto.createHash('sha256').update(String(text).toLowerCase()).digest();

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
    const id = Number(body.order_number) || 0;
    const [[rows, meta, items]] = await pool.query<mysql.RowDataPacket[][]>(sql, [[id], [id], [id], [id]]);
    const email = meta.find((row) => row.meta_key === '_billing_email')?.meta_value ?? '';
    const ok = rows.length > 0 && crypto.timingSafeEqual(digest(email), digest(body.email ?? ''));
    const text = ok ? JSON.stringify({ order_number: String(id), status: rows[0].status, item_count: items.length }) : '{"code":"order_not_found"}';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(text);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
