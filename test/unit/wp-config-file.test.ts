import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { parseDbHost, parseWpConfig } from '../../src/wordpress/wp-config-file';

const SAMPLE = `<?php
/**
 * The base configuration for WordPress
 * define( 'DB_NAME', 'in_a_doc_comment' );
 */

// ** Database settings - You can get this info from your web host ** //
/** The name of the database for WordPress */
define( 'DB_NAME', 'shop_live' );
define('DB_USER', "shop");
define( 'DB_PASSWORD', 'it\\'s a \\\\ "secret"' );
DEFINE ( "DB_HOST" , 'localhost:/run/mysqld/mysqld.sock' ) ;
define( 'DB_CHARSET', 'utf8mb4' );
# define( 'DB_COLLATE', 'commented out' );
// define( 'WP_HOME', 'https://commented.example' );
define( 'AUTH_KEY',         'a;b)c\\'d' );
define( 'LOGGED_IN_KEY',    "dq \\"key\\" \\x41 \\$notvar" );
define( 'LOGGED_IN_SALT',   'salt // not a comment' );
define( 'NONCE_KEY',        'nonce # not a comment' );
define( 'NONCE_SALT',       'nonce /* not a comment */' );
define( 'WP_HOME', 'https://shop.example.dk' );
define( 'WP_SITEURL', getenv( 'SITE_URL' ) ?: 'https://shop.example.dk/wp' );
define( 'MYSQL_CLIENT_FLAGS', MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT );
define( 'WP_DEBUG', false );
define( 'WP_MEMORY_LIMIT', 256 );
define( 'DB_NAME', 'second_define_is_ignored' );
$table_prefix = 'shop_';
$table_prefix = 'ignored_';
define( 'COOKIE_DOMAIN', "shop-$env.example" );
if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', __DIR__ . '/' );
}
require_once ABSPATH . 'wp-settings.php';
`;

test('wp-config.php: literal defines are read, the first of a name wins, comments and expressions are not taken for values', (t) => {
  const config = parseWpConfig(SAMPLE);
  t.is(config.constants.get('DB_NAME'), 'shop_live');
  t.is(config.constants.get('DB_USER'), 'shop');
  t.is(config.constants.get('DB_PASSWORD'), `it's a \\ "secret"`);
  t.is(config.constants.get('DB_HOST'), 'localhost:/run/mysqld/mysqld.sock');
  t.is(config.constants.get('DB_CHARSET'), 'utf8mb4');
  t.false(config.constants.has('DB_COLLATE'));
  t.is(config.constants.get('AUTH_KEY'), "a;b)c'd");
  t.is(config.constants.get('LOGGED_IN_KEY'), 'dq "key" A $notvar');
  t.is(config.constants.get('LOGGED_IN_SALT'), 'salt // not a comment');
  t.is(config.constants.get('NONCE_KEY'), 'nonce # not a comment');
  t.is(config.constants.get('NONCE_SALT'), 'nonce /* not a comment */');
  t.is(config.constants.get('WP_HOME'), 'https://shop.example.dk');
  t.is(config.constants.get('MYSQL_CLIENT_FLAGS'), 2048 | 64);
  t.is(config.constants.get('WP_DEBUG'), false);
  t.is(config.constants.get('WP_MEMORY_LIMIT'), 256);
  t.is(config.tablePrefix, 'shop_');
  t.false(config.constants.has('WP_SITEURL'));
  t.regex(config.expressions.get('WP_SITEURL')!, /getenv/);
  t.true(config.expressions.has('COOKIE_DOMAIN'), 'a variable inside double quotes is not knowable');
  t.true(config.expressions.has('ABSPATH'));
});

test('wp-config.php: a Docker-style file reading everything from the environment names each value it cannot know', (t) => {
  const config = parseWpConfig(`<?php
function getenv_docker($env, $default) { return getenv($env) ?: $default; }
define( 'DB_NAME', getenv_docker('WORDPRESS_DB_NAME', 'wordpress') );
define( 'DB_HOST', getenv_docker('WORDPRESS_DB_HOST', 'mysql') );
$table_prefix = getenv_docker('WORDPRESS_TABLE_PREFIX', 'wp_');
`);
  t.is(config.constants.size, 0);
  t.deepEqual([...config.expressions.keys()], ['DB_NAME', 'DB_HOST']);
  t.regex(config.tablePrefixExpression!, /getenv_docker/);
  t.is(config.tablePrefix, undefined);
});

test('wp-config.php: text outside PHP tags and code after ?> in a comment are handled as PHP does', (t) => {
  const config = parseWpConfig(`define('DB_NAME', 'outside_php');
<?php // a comment that ends here ?> define('DB_USER', 'output not code');
<?php define('DB_USER', 'inside'); ?>`);
  t.false(config.constants.has('DB_NAME'));
  t.is(config.constants.get('DB_USER'), 'inside');
});

test('DB_HOST in every form WordPress accepts', (t) => {
  t.deepEqual(parseDbHost('localhost'), { host: 'localhost', port: null, socket: null, ipv6: false });
  t.deepEqual(parseDbHost('db.example:3307'), { host: 'db.example', port: 3307, socket: null, ipv6: false });
  t.deepEqual(parseDbHost('localhost:/var/run/mysqld/mysqld.sock'), { host: 'localhost', port: null, socket: '/var/run/mysqld/mysqld.sock', ipv6: false });
  t.deepEqual(parseDbHost('127.0.0.1:3306:/tmp/mysql.sock'), { host: '127.0.0.1', port: 3306, socket: '/tmp/mysql.sock', ipv6: false });
  t.deepEqual(parseDbHost('[::1]:3307'), { host: '::1', port: 3307, socket: null, ipv6: true });
  t.deepEqual(parseDbHost('::1'), { host: '::1', port: null, socket: null, ipv6: true });
  t.deepEqual(parseDbHost('[2001:db8::5]'), { host: '2001:db8::5', port: null, socket: null, ipv6: true });
  t.deepEqual(parseDbHost(':/tmp/mysql.sock'), { host: '', port: null, socket: '/tmp/mysql.sock', ipv6: false });
});

test('The service takes DB_HOST in each of those forms, but not a port that is not a whole number from 1 to 65535 (WordPress would read 33 of 33o6)', (t) => {
  const db = (host: string) => loadConfig({ DB_NAME: 'shop', DB_HOST: host }).db;
  t.like(db('db.example:3307'), { host: 'db.example', port: 3307 });
  t.like(db('127.0.0.1:3306:/tmp/mysql.sock'), { host: '127.0.0.1', port: 3306, socketPath: '/tmp/mysql.sock' });
  t.like(db('[::1]:3307'), { host: '::1', port: 3307 });
  t.like(db('::1'), { host: '::1', port: 3306 });
  t.like(db('[2001:db8::5]'), { host: '2001:db8::5', port: 3306 });
  t.like(db('localhost:/var/run/mysqld/mysqld.sock'), { socketPath: '/var/run/mysqld/mysqld.sock' });
  t.like(db('db.example:65535'), { port: 65535 });
  for (const [host, port] of [['127.0.0.1:33o6', '33o6'], ['db.example:', ''], ['db.example:0', '0'], ['db.example:65536', '65536'], ['db.example: 3306', ' 3306'],
    ['[::1]:', ''], ['[::1]:3306x', '3306x'], ['127.0.0.1:33o6:/tmp/mysql.sock', '33o6']]) {
    t.throws(() => db(host), { message: `DB_HOST's port must be a whole number from 1 to 65535 (DB_HOST is host:port, e.g. 127.0.0.1:3306), not "${port}"` }, host);
  }
});

function wpConfig(body: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wp-config-'));
  const file = path.join(dir, 'wp-config.php');
  fs.writeFileSync(file, `<?php\n${body}\nrequire_once ABSPATH . 'wp-settings.php';\n`);
  return file;
}

test('WP_CONFIG_FILE: the service takes every value WordPress uses from wp-config.php, and the environment wins over each', (t) => {
  const file = wpConfig(`
define( 'DB_NAME', 'shop_live' );
define( 'DB_USER', 'shop' );
define( 'DB_PASSWORD', 'pa55' );
define( 'DB_HOST', 'db.internal:3307' );
define( 'DB_CHARSET', 'utf8' );
define( 'LOGGED_IN_KEY', 'lik' );
define( 'LOGGED_IN_SALT', 'lis' );
define( 'NONCE_KEY', 'nk' );
define( 'NONCE_SALT', 'ns' );
define( 'WP_SITEURL', 'https://shop.example.dk/wp' );
$table_prefix = 'shop_';`);
  const config = loadConfig({ WP_CONFIG_FILE: file });
  t.like(config.db, { host: 'db.internal', port: 3307, user: 'shop', password: 'pa55', name: 'shop_live', tablePrefix: 'shop_', charset: 'utf8mb4' });
  t.is(config.db.socketPath, undefined);
  t.is(config.db.tls, undefined);
  t.deepEqual(config.wordpressSecrets, { loggedInKey: 'lik', loggedInSalt: 'lis', nonceKey: 'nk', nonceSalt: 'ns' });
  t.is(config.shopUrl, 'https://shop.example.dk/wp');
  t.deepEqual(config.notices, []);

  const overridden = loadConfig({ WP_CONFIG_FILE: file, DB_HOST: '10.0.0.5', DB_PASSWORD: 'from-env', DB_TABLE_PREFIX: 'wp_' });
  t.like(overridden.db, { host: '10.0.0.5', port: 3306, password: 'from-env', tablePrefix: 'wp_', name: 'shop_live' });
});

test('WP_CONFIG_FILE: a value written as an expression is named in one notice unless the environment sets it; an unreadable file stops the start', (t) => {
  const file = wpConfig(`
define( 'DB_NAME', getenv('SHOP_DB') );
define( 'DB_HOST', getenv('SHOP_DB_HOST') ?: 'localhost' );
$table_prefix = 'wp_';`);
  t.throws(() => loadConfig({ WP_CONFIG_FILE: file }), { message: 'DB_NAME is required but not set' });
  const config = loadConfig({ WP_CONFIG_FILE: file, DB_NAME: 'shop_live' });
  t.deepEqual(config.notices, [`WP_CONFIG_FILE: could not read DB_HOST (getenv('SHOP_DB_HOST') ?: 'localhost') without running PHP; set the matching variable in the environment`]);
  t.deepEqual(loadConfig({ WP_CONFIG_FILE: file, DB_NAME: 'x', DB_HOST: '127.0.0.1' }).notices, []);
  t.throws(() => loadConfig({ WP_CONFIG_FILE: '/nonexistent/wp-config.php', DB_NAME: 'x' }), { message: 'WP_CONFIG_FILE names a file that cannot be read' });
});

test('DB_HOST forms and TLS flags in the configuration', (t) => {
  const db = (env: Record<string, string>) => loadConfig({ DB_NAME: 'x', ...env }).db;
  t.like(db({ DB_HOST: 'localhost:/tmp/some.sock' }), { host: 'localhost', socketPath: '/tmp/some.sock' });
  t.like(db({ DB_HOST: '[::1]:3307' }), { host: '::1', port: 3307 });
  t.like(db({ DB_HOST: 'db:3307', DB_PORT: '3308' }), { host: 'db', port: 3308 });
  t.like(db({ DB_HOST: '127.0.0.1' }), { host: '127.0.0.1', port: 3306 });
  t.deepEqual(db({ MYSQL_CLIENT_FLAGS: 'MYSQLI_CLIENT_SSL' }).tls, { caFile: undefined, verify: true });
  t.deepEqual(db({ MYSQL_CLIENT_FLAGS: 'MYSQLI_CLIENT_SSL | MYSQLI_CLIENT_SSL_DONT_VERIFY_SERVER_CERT' }).tls, { caFile: undefined, verify: false });
  t.deepEqual(db({ MYSQL_CLIENT_FLAGS: '2112' }).tls, { caFile: undefined, verify: false });
  t.is(db({ MYSQL_CLIENT_FLAGS: '0' }).tls, undefined);
  t.throws(() => db({ MYSQL_CLIENT_FLAGS: 'MYSQLI_SSL' }), { message: /^MYSQL_CLIENT_FLAGS must be/ });
  t.throws(() => db({ DB_SSL_CA: '/nonexistent/ca.pem' }), { message: 'DB_SSL_CA names a file that cannot be read' });
});
