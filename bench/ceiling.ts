import http from 'node:http';
import crypto from 'node:crypto';
import mysql from 'mysql2/promise';

/**
 * The stack's ceiling: a bare node:http + mysql2 program doing the order status route's reads
 * (the order with its meta, and its items, for legacy storage) and the email comparison, without
 * the framework, configuration, throttling or response building.
 */
const prefix = process.env.DB_TABLE_PREFIX ?? 'wp_';
const pool = mysql.createPool({ host: '127.0.0.1', user: 'root', database: process.env.DB_NAME, connectionLimit: 10, dateStrings: true });
const orderSql = `SELECT p.ID, p.post_status, p.post_date_gmt, m.meta_key, m.meta_value FROM ${prefix}posts p
  LEFT JOIN ${prefix}postmeta m ON m.post_id = p.ID WHERE p.ID = ? AND p.post_type = 'shop_order'`;
const itemsSql = `SELECT i.order_item_id, i.order_item_name, i.order_item_type, im.meta_key, im.meta_value
  FROM ${prefix}woocommerce_order_items i LEFT JOIN ${prefix}woocommerce_order_itemmeta im ON im.order_item_id = i.order_item_id
  WHERE i.order_id = ?`;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
    const id = Number(body.order_number) || 0;
    const [[rows], [items]] = await Promise.all([pool.query<mysql.RowDataPacket[]>(orderSql, [id]), pool.query<mysql.RowDataPacket[]>(itemsSql, [id])]);
    const email = rows.find((row) => row.meta_key === '_billing_email')?.meta_value ?? '';
    const digest = (text: string) => crypto.createHash('sha256').update(String(text).toLowerCase()).digest();
    const ok = rows.length > 0 && crypto.timingSafeEqual(digest(email), digest(body.email ?? ''));
    const text = ok ? JSON.stringify({ order_number: String(id), status: rows[0].post_status, item_count: items.length }) : '{"code":"order_not_found"}';
    res.writeHead(ok ? 200 : 404, { 'content-type': 'application/json' });
    res.end(text);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
