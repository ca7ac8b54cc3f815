import fs from 'node:fs';
import test from 'ava';
import mysql from 'mysql2/promise';
import { PrivateMariaDb } from './private-mariadb';
import { createTestShop } from './test-shop';

// The private MariaDB server the fault tests kill and start: it runs as the shared one does, and a
// kill loses nothing committed.

test('A private MariaDB starts on its own port, takes a test shop, survives being killed and started again with its committed rows, and leaves nothing behind', async (t) => {
  const startedAt = Date.now();
  const server = await PrivateMariaDb.start();
  t.log(`installed and started in ${Date.now() - startedAt} ms on port ${server.port}`);
  try {
    t.not(server.port, 3306);
    const admin = await server.connect();
    const [[settings]] = await admin.query(
      `SELECT @@port AS port, @@bind_address AS bind, @@skip_name_resolve AS skipNameResolve, @@character_set_server AS charset,
              @@innodb_flush_log_at_trx_commit AS flush, @@innodb_lock_wait_timeout AS lockWait, @@sql_mode AS sqlMode,
              @@innodb_buffer_pool_size AS bufferPool`) as any;
    t.like(settings, { port: server.port, bind: '127.0.0.1', skipNameResolve: 1, charset: 'utf8mb4', flush: 1, lockWait: 50 });
    t.true(Number(settings.bufferPool) <= 64 * 1024 * 1024);
    const [users] = await admin.query(`SELECT User AS user, Host AS host FROM mysql.user WHERE User = 'root'`) as any;
    t.true(users.some((row: any) => row.host === '127.0.0.1'), 'root may connect over TCP from 127.0.0.1, without a password');
    await admin.end();

    // The test shop, its tables and the service's migrations on this server; the config points there.
    const shop = await createTestShop('private_mariadb', { host: server.host, port: server.port });
    t.like(shop.config().db, { host: '127.0.0.1', port: server.port });
    await shop.db.query(`INSERT INTO ${shop.prefix}options (option_name, option_value, autoload) VALUES ('kill_test', 'kept', 'no')`);

    const startKilled = Date.now();
    await server.stop();
    t.false(server.running);
    await t.throwsAsync(mysql.createConnection({ host: server.host, port: server.port, user: 'root', connectTimeout: 1000 }));
    await server.start();
    t.log(`started again after a kill in ${Date.now() - startKilled} ms`);
    const [kept] = await shop.db.query(`SELECT option_value FROM ${shop.prefix}options WHERE option_name = 'kill_test'`).catch(async () =>
      // The pool's idle connections broke with the kill; the next query opens fresh ones.
      shop.db.query(`SELECT option_value FROM ${shop.prefix}options WHERE option_name = 'kill_test'`)) as any;
    t.deepEqual(kept.map((row: any) => row.option_value), ['kept'], 'a committed row outlives a kill');

    await server.restart();
    const sessions = await server.processList();
    t.true(Array.isArray(sessions));
    await shop.drop().catch(() => shop.drop());
  } finally {
    await server.cleanup();
  }
  t.false(fs.existsSync(server.dir), 'cleanup removes the data directory');
});
