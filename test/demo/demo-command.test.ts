import https from 'node:https';
import net from 'node:net';
import test from 'ava';
import mysql from 'mysql2/promise';
import { DEMO_MARKER_TABLE } from '../../src/demo/demo-database';
import { dropDatabase } from '../../src/demo/woocommerce-schema';
import { startNpmScript, type ScriptProcess } from '../support/npm-script';
import { freePort } from '../support/free-port';

// The real `npm run demo` (after its build step), each run on a port and a database of this file's own.
// Serial: one demo at a time is a shop seeded, migrated and served.

const foreign = `ss_t_demo_foreign_${process.pid}`;
const own = `ss_t_demo_own_${process.pid}`;
const busy = `ss_t_demo_busy_${process.pid}`;
let admin: mysql.Connection;
const demos: ScriptProcess[] = [];

function demo(env: Record<string, string>): ScriptProcess {
  const started = startNpmScript('demo', env);
  demos.push(started);
  return started;
}

async function databaseExists(name: string): Promise<boolean> {
  const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]);
  return rows.length > 0;
}

test.before(async () => {
  admin = await mysql.createConnection({ host: '127.0.0.1', user: 'root' });
});

test.after.always(async () => {
  for (const started of demos) await started.kill();
  for (const name of [foreign, own, busy]) await dropDatabase(admin, name);
  await admin.end();
});

test.serial('When DEMO_DB_NAME names a database the demo did not create, Then the demo refuses in one line and the database survives', async (t) => {
  await admin.query(`CREATE DATABASE \`${foreign}\``);
  await admin.query(`CREATE TABLE \`${foreign}\`.wp_options (option_name VARCHAR(191) PRIMARY KEY, option_value TEXT)`);
  await admin.query(`INSERT INTO \`${foreign}\`.wp_options VALUES ('blogname', 'The real shop')`);
  const started = Date.now();
  const run = demo({ DEMO_DB_NAME: foreign, DEMO_PORT: String(await freePort()) });
  const code = await run.ended(90_000);
  t.log(`exit ${code} after ${Date.now() - started} ms`);
  t.not(code, 0);
  t.is(run.stderr().trim(), `demo: database "${foreign}" exists and the demo did not create it (it has no ${DEMO_MARKER_TABLE} table), so it is left as it is: set DEMO_DB_NAME to another name`);
  t.true(await databaseExists(foreign));
  const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT option_value FROM \`${foreign}\`.wp_options`);
  t.deepEqual(rows.map((row) => row.option_value), ['The real shop']);
});

test.serial('When the demo runs twice on its own database, Then it marks the database as its own and starts afresh on it the second time', async (t) => {
  for (const time of [1, 2]) {
    const started = Date.now();
    const run = demo({ DEMO_DB_NAME: own, DEMO_PORT: String(await freePort()) });
    await run.printed(/Press Ctrl\+C to stop/, 120_000);
    t.log(`run ${time}: serving after ${Date.now() - started} ms`);
    t.regex(run.stdout(), new RegExp(`Demo shop database "${own}" is ready and the API is serving`));
    if (time === 1) {
      // The helpdesk card's request as printed, made as curl -k makes it: the demo's customer, and the shop manager's links.
      const printed = /curl -sk -H 'Authorization: Bearer ([0-9a-f]+)' '([^']+\/helpdesk\/v1\/card\?[^']+)'/.exec(run.stdout());
      t.truthy(printed, 'the card\'s request is printed');
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        https.get(printed![2]!, { headers: { authorization: `Bearer ${printed![1]}` }, rejectUnauthorized: false }, (res) => {
          let body = '';
          res.on('data', (chunk) => { body += chunk; });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        }).on('error', reject);
      });
      t.is(answer.status, 200, answer.body);
      const card = JSON.parse(answer.body);
      t.truthy(card.customer, answer.body);
      t.true(card.orders.length > 0);
    }
    run.child.kill('SIGINT');
    t.is(await run.ended(10_000), 0, run.stderr());
    const [markers] = await admin.query<mysql.RowDataPacket[]>(`SELECT note FROM \`${own}\`.\`${DEMO_MARKER_TABLE}\``);
    t.is(markers.length, 1, 'one mark: the database was made afresh');
  }
});

test.serial('When DEMO_PORT is taken, Then the demo says so in one line naming DEMO_PORT, exits non-zero, and neither claims to serve nor touches a database', async (t) => {
  const port = await freePort();
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  try {
    const started = Date.now();
    const run = demo({ DEMO_DB_NAME: busy, DEMO_PORT: String(port) });
    const code = await run.ended(90_000);
    t.log(`exit ${code} after ${Date.now() - started} ms`);
    t.not(code, 0);
    t.is(run.stderr().trim(), `demo: port ${port} on 127.0.0.1 is in use by another process: stop it, or set DEMO_PORT to a free port`);
    t.false(run.stdout().includes('is serving'), run.stdout());
    t.false(await databaseExists(busy));
  } finally {
    await new Promise((resolve) => holder.close(resolve));
  }
});
