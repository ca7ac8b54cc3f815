import http from 'node:http';
import crypto from 'node:crypto';
import mysql from 'mysql2/promise';

/**
 * The stack's ceiling: a bare node:http + mysql2 program doing the order status route's reads for
 * legacy storage (the order, its meta, and its items and refunds: the same three statements in
 * one round trip, one order per request) and the email comparison, without the framework, configuration, throttling or
 * response building.
 */
const p = process.env.DB_TABLE_PREFIX ?? 'wp_';
const pool = mysql.createPool({ host: '127.0.0.1', user: 'root', database: process.env.DB_NAME, connectionLimit: 10, dateStrings: true, multipleStatements: true, trace: false });
const sql = `SELECT p.ID AS id, p.post_type AS type, p.post_status AS status, p.post_date_gmt AS date_created_gmt
    FROM ${p}posts p WHERE p.ID IN (?) AND p.post_type = 'shop_order' AND p.post_status NOT IN ('trash', 'auto-draft', 'draft', 'wc-checkout-draft');
  SELECT m.post_id AS id, m.meta_key, m.meta_value FROM ${p}postmeta m WHERE m.post_id IN (?);
  SELECT i.order_id, i.order_item_id, i.order_item_name, i.order_item_type, im.meta_key, im.meta_value
    FROM ${p}woocommerce_order_items i LEFT JOIN ${p}woocommerce_order_itemmeta im ON im.order_item_id = i.order_item_id
    WHERE i.order_id IN (?)
  UNION ALL SELECT r.post_parent, NULL, NULL, NULL, NULL, r.ID FROM ${p}posts r FORCE INDEX (post_parent)
    WHERE r.post_parent IN (?) AND r.post_type = 'shop_order_refund'`;

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
