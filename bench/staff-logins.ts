import crypto from 'node:crypto';
import http from 'node:http';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { setOption } from '../src/demo/woocommerce-schema';
import { ShopSeeder } from '../src/demo/shop-seeder';
import { phpSerialize } from '../src/wordpress/php-serialize';
import { hashPasswordLikeWordPress, phpassHash } from '../src/wordpress/passwords';
import { measure, resultRow, type Row } from './common';

/**
 * The order status route (a match) alone, then while 20 clients keep sending staff logins with a wrong
 * application password, each from an address of its own (a spread-out attack, so the per-address limit
 * does not spare the service the checks). The user's two application passwords were stored before
 * WordPress 6.8 (phpass and bcrypt cost 10), so every failed login costs both checks. Target: the order
 * status p99 under the logins within 2 x its p99 alone.
 */
export async function benchStaffLogins(opts: { dbName: string; prefix: string; size: number; url: string; duration: number; orderStatus: autocannon.RequestSpec[] }): Promise<{ rows: Row[]; target: string[] }> {
  const login = await prepareUser(opts.dbName, opts.prefix);
  const alone = resultRow(opts.size, 'shop-sidecar API', 'order status, match', await measure(opts.url, opts.duration, opts.orderStatus), 0);

  const attack = { stop: false, statuses: new Map<number, number>() };
  const clients = Array.from({ length: 20 }, () => failingLogins(opts.url, login, attack));
  let loaded: Row;
  try {
    const result = await measure(opts.url, opts.duration, opts.orderStatus);
    loaded = resultRow(opts.size, 'shop-sidecar API', 'order status, match, with 20 failing staff logins', result, 0);
  } finally {
    attack.stop = true;
    await Promise.all(clients);
  }
  const logins = [...attack.statuses].map(([status, n]) => `${n} × ${status}`).join(', ');
  for (const row of [alone, loaded]) row.non2xxOrErrors = '';
  loaded.non2xxOrErrors = `staff logins answered meanwhile: ${logins}`;
  const met = loaded.p99 <= 2 * alone.p99;
  return {
    rows: [alone, loaded],
    target: ['| target | measured | |', '|---|---:|---|', `| order status p99 with 20 failing staff logins <= 2 x alone | ${loaded.p99} / ${alone.p99} ms | ${met ? 'met' : 'not met'} |`, ''],
  };
}

/** A shop manager whose application passwords are old-style hashes; returns the login. */
async function prepareUser(dbName: string, prefix: string): Promise<string> {
  const pool = mysql.createPool({ host: '127.0.0.1', user: 'root', database: dbName, connectionLimit: 2 });
  try {
    const seeder = new ShopSeeder(pool, prefix, { hpos: false, sync: false });
    const login = `bench-staff-${crypto.randomBytes(3).toString('hex')}`;
    const userId = await seeder.createUser({ login, email: `${login}@example.dk`, roles: ['shop_manager'] });
    const item = (name: string, hash: string) => ({ uuid: crypto.randomUUID(), app_id: '', name, password: hash, created: Math.floor(Date.now() / 1000), last_used: null, last_ip: null });
    const items = [item('phpass', phpassHash(crypto.randomBytes(12).toString('hex'))), item('bcrypt', await hashPasswordLikeWordPress(crypto.randomBytes(12).toString('hex'), 10))];
    await pool.query(`INSERT INTO ${prefix}usermeta (user_id, meta_key, meta_value) VALUES (?, '_application_passwords', ?)`, [userId, phpSerialize(items)]);
    await setOption(pool, prefix, 'using_application_passwords', '1');
    return login;
  } finally {
    await pool.end();
  }
}

/** One client: a wrong application password after another on a keep-alive connection, each time from a new address. */
async function failingLogins(url: string, login: string, attack: { stop: boolean; statuses: Map<number, number> }): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const authorization = `Basic ${Buffer.from(`${login}:wrong wrong wrong wrong`).toString('base64')}`;
  try {
    while (!attack.stop) {
      const address = `198.18.${crypto.randomInt(256)}.${crypto.randomInt(256)}`;
      const status = await new Promise<number>((resolve) => {
        const req = http.request(`${url}/shop/v3/helpdesk/v1/list?email=nobody%40example.dk`, {
          agent, headers: { authorization, 'x-forwarded-proto': 'https', 'x-forwarded-for': address },
        }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
        req.on('error', () => resolve(0));
        req.end();
      });
      attack.statuses.set(status, (attack.statuses.get(status) ?? 0) + 1);
    }
  } finally {
    agent.destroy();
  }
}
