import mysql from 'mysql2/promise';
import type { TestShop } from '../../support/test-shop';
import { cookieHeader, loggedInCookieValue, restNonce, setSessions, wpGeneratePassword } from '../../support/wordpress-fixtures';
import type { WooCommerceShop } from './woocommerce-shop';

/**
 * A shop manager made as the users screen makes one, with a display name of their own, logged in as wp_signon does:
 * the cookie and REST nonce their browser sends with a staff action (`x-forwarded-proto` as the nginx origin sets it).
 */
export async function shopManagerSession(
  shop: WooCommerceShop,
  manager: { login: string; displayName: string; password: string },
  siteUrl: string,
): Promise<{ id: number; headers: Record<string, string> }> {
  const made = await shop.php<{ id: number }>('user', { login: manager.login, role: 'shop_manager', password: manager.password });
  // The session tokens and the display name, written as WordPress keeps them (the driver's SQL only reads).
  const db = mysql.createPool({ host: '127.0.0.1', user: 'root', database: shop.dbName, connectionLimit: 1, dateStrings: true });
  try {
    await db.query(`UPDATE ${shop.prefix}users SET display_name = ? WHERE ID = ?`, [manager.displayName, made.id]);
    const [rows] = await db.query(`SELECT user_pass FROM ${shop.prefix}users WHERE ID = ?`, [made.id]);
    const userPass = String((rows as { user_pass: string }[])[0]!.user_pass);
    const now = Math.floor(Date.now() / 1000);
    const token = wpGeneratePassword(43);
    const expiration = now + 2 * 86400;
    await setSessions({ db, prefix: shop.prefix } as unknown as TestShop, made.id, [{ token, expiration }]);
    return {
      id: made.id,
      headers: {
        cookie: cookieHeader(loggedInCookieValue({ login: manager.login, userPass, expiration, token }), siteUrl),
        'x-wp-nonce': restNonce({ uid: made.id, token, nowSeconds: now }),
        'x-forwarded-proto': 'https',
      },
    };
  } finally {
    await db.end();
  }
}
