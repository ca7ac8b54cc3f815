<?php
/**
 * Test-only WordPress bootstrap for one shop: stands in for wp-config.php (Debian's reads /etc/wordpress), so
 * the same WordPress tree serves many shops, each with its own database and wp-content folder.
 *
 * Environment (set by test/woocommerce/support/woocommerce-shop.ts):
 *   SIDECAR_WP_DIR       WordPress tree (the folder with wp-settings.php)
 *   SIDECAR_WC_DIR       unpacked WooCommerce plugin folder
 *   SIDECAR_WCS_DIR      unpacked WooCommerce Subscriptions plugin folder
 *   SIDECAR_SITE_DIR     this shop's own folder; wp-content is made inside it
 *   SIDECAR_DB_NAME      this shop's database
 *   SIDECAR_DB_PREFIX    table prefix (default wp_)
 *   SIDECAR_DB_HOST/USER/PASSWORD   default 127.0.0.1:3306, root, no password
 *   SIDECAR_COMPANION    optional PHP file loaded as a must-use plugin (e.g. the shop's own companion plugin)
 *   SIDECAR_SALT_<NAME>  optional override of a salt constant (AUTH_KEY ... NONCE_SALT)
 *   SIDECAR_SERVICE_URL  optional SHOP_SIDECAR_SERVICE_URL: where the companion sends its notices (the test's service)
 *   SIDECAR_PROVIDER_PLUGINS  '1': the providers' own plugins (SIDECAR_CARD_PLUGIN, SIDECAR_WALLET_PLUGIN, unpacked by
 *                        run.sh) are in this shop's plugins folder, with the must-use plugin that sends their API calls
 *                        to the test's fakes (the test activates them: driver command provider_plugins)
 *
 * Define SIDECAR_INSTALLING before requiring this file to load WordPress before its tables exist.
 *
 * Two ways in: the CLI driver (driver.php), and web requests when a test serves the shop over HTTP with PHP's
 * built-in server (support/serve-over-http.ts: http-router.php defines ABSPATH as the served folder, whose
 * wp-config.php requires this file). Only the CLI pretends to be a request to https://shop.example.dk and keeps
 * WP-Cron off; a served shop runs WP-Cron as a shop does (spawned by requests, no system cron).
 */

$sidecar_cli = 'cli' === PHP_SAPI;

function sidecar_env( string $name, ?string $default = null ): string {
	$value = getenv( $name );
	if ( false === $value || '' === $value ) {
		if ( null === $default ) {
			fwrite( STDERR, "bootstrap.php: environment variable $name is not set\n" );
			exit( 2 );
		}
		return $default;
	}
	return $value;
}

/** Makes $link a symlink to $target unless it already is one (a changed release gets a new target). */
function sidecar_link( string $target, string $link ): void {
	if ( is_link( $link ) && readlink( $link ) === $target ) {
		return;
	}
	if ( is_link( $link ) || file_exists( $link ) ) {
		unlink( $link );
	}
	if ( ! symlink( $target, $link ) ) {
		fwrite( STDERR, "bootstrap.php: cannot link $link to $target\n" );
		exit( 2 );
	}
}

/** The per-shop wp-content: plugins link to the unpacked releases, must-use plugins to the test plugins. */
function sidecar_prepare_content( string $content ): void {
	// themes/ too: without a theme folder WordPress warns on every wp_is_block_theme() call.
	foreach ( array( "$content/plugins", "$content/mu-plugins", "$content/uploads", "$content/themes" ) as $dir ) {
		if ( ! is_dir( $dir ) && ! mkdir( $dir, 0777, true ) && ! is_dir( $dir ) ) {
			fwrite( STDERR, "bootstrap.php: cannot create $dir\n" );
			exit( 2 );
		}
	}
	sidecar_link( rtrim( sidecar_env( 'SIDECAR_WC_DIR' ), '/' ), "$content/plugins/woocommerce" );
	sidecar_link( rtrim( sidecar_env( 'SIDECAR_WCS_DIR' ), '/' ), "$content/plugins/woocommerce-subscriptions" );
	foreach ( array( 'sidecar-test-recorder.php', 'sidecar-test-gateways.php' ) as $file ) {
		sidecar_link( __DIR__ . "/mu-plugins/$file", "$content/mu-plugins/$file" );
	}
	// The providers' plugins and the routing of their calls, only in the shops of the tests that run them.
	$providers = '1' === getenv( 'SIDECAR_PROVIDER_PLUGINS' );
	foreach ( array( 'SIDECAR_CARD_PLUGIN' => 'reepay-checkout-gateway', 'SIDECAR_WALLET_PLUGIN' => 'woo-vipps' ) as $env => $folder ) {
		if ( $providers ) {
			sidecar_link( rtrim( sidecar_env( $env ), '/' ), "$content/plugins/$folder" );
		} elseif ( is_link( "$content/plugins/$folder" ) ) {
			unlink( "$content/plugins/$folder" );
		}
	}
	$hosts = "$content/mu-plugins/sidecar-test-provider-hosts.php";
	if ( $providers ) {
		sidecar_link( __DIR__ . '/mu-plugins/sidecar-test-provider-hosts.php', $hosts );
	} elseif ( is_link( $hosts ) ) {
		unlink( $hosts );
	}
	// A theme for the tests that use the front end as a customer does (active only where a test switches to it).
	sidecar_link( __DIR__ . '/themes/sidecar-test-theme', "$content/themes/sidecar-test-theme" );
	// The companion is named by the test, so it may differ between runs of the same shop folder.
	$companion = getenv( 'SIDECAR_COMPANION' );
	$link      = "$content/mu-plugins/zz-sidecar-companion.php";
	if ( $companion ) {
		$real = realpath( $companion );
		if ( false === $real ) {
			fwrite( STDERR, "bootstrap.php: SIDECAR_COMPANION $companion does not exist\n" );
			exit( 2 );
		}
		sidecar_link( $real, $link );
	} elseif ( is_link( $link ) ) {
		unlink( $link );
	}
}

$sidecar_site    = rtrim( sidecar_env( 'SIDECAR_SITE_DIR' ), '/' );
$sidecar_content = "$sidecar_site/wp-content";
sidecar_prepare_content( $sidecar_content );

if ( ! defined( 'ABSPATH' ) ) {
	define( 'ABSPATH', rtrim( sidecar_env( 'SIDECAR_WP_DIR' ), '/' ) . '/' );
}
define( 'DB_NAME', sidecar_env( 'SIDECAR_DB_NAME' ) );
define( 'DB_USER', sidecar_env( 'SIDECAR_DB_USER', 'root' ) );
define( 'DB_PASSWORD', (string) getenv( 'SIDECAR_DB_PASSWORD' ) );
define( 'DB_HOST', sidecar_env( 'SIDECAR_DB_HOST', '127.0.0.1:3306' ) );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
$table_prefix = sidecar_env( 'SIDECAR_DB_PREFIX', 'wp_' ); // phpcs:ignore WordPress.WP.GlobalVariablesOverride

define( 'WP_CONTENT_DIR', $sidecar_content );
define( 'WP_PLUGIN_DIR', "$sidecar_content/plugins" );
define( 'WPMU_PLUGIN_DIR', "$sidecar_content/mu-plugins" );
if ( $sidecar_cli ) {
	// URLs are never fetched by the CLI; they only have to be stable, like the site URL the install sets. A served
	// shop takes its content URL from its siteurl, as WordPress does by default.
	define( 'WP_CONTENT_URL', 'https://shop.example.dk/wp-content' );
}

// Errors go to stderr, never into the JSON on stdout. WordPress' fatal error page would print HTML to stdout
// and try to mail the admin: PHP's own handling (message on stderr, exit 255) is what the TS side reads.
define( 'WP_DEBUG', true );
define( 'WP_DEBUG_DISPLAY', false );
define( 'WP_DEBUG_LOG', 'php://stderr' );
define( 'WP_DISABLE_FATAL_ERROR_HANDLER', true );
// (The built-in web server would print displayed errors into the response: there they only go to its log.)
ini_set( 'display_errors', $sidecar_cli ? 'stderr' : '0' );
ini_set( 'log_errors', '1' );
ini_set( 'error_log', 'php://stderr' );

// In the CLI, time-driven work runs only when a test asks for it (driver.php run_actions), never on its own: a
// command (e.g. a read while the shop is served over HTTP) never spawns WP-Cron. A served shop keeps WP-Cron on.
if ( $sidecar_cli ) {
	define( 'DISABLE_WP_CRON', true );
}
// No internet: a request to the outside fails at once instead of waiting for a time-out. Local servers a test
// starts (webhook receivers on 127.0.0.1) stay reachable.
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_AUTO_UPDATE_CORE', false );
define( 'WP_MEMORY_LIMIT', '512M' );
define( 'WP_MAX_MEMORY_LIMIT', '512M' );

// Fixed salts: test shops are throw-away and their cookies and nonces never leave the machine. The TS side
// passes the ones the service's tests use (SIDECAR_SALT_LOGGED_IN_KEY...), so cookies made here verify there.
foreach ( array( 'AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT' ) as $sidecar_salt ) {
	define( $sidecar_salt, sidecar_env( "SIDECAR_SALT_$sidecar_salt", "sidecar-test-$sidecar_salt-0123456789abcdef" ) );
}

// The service a test runs beside the shop, as an operator points the companion's notices at it in wp-config.php.
$sidecar_service_url = getenv( 'SIDECAR_SERVICE_URL' );
if ( $sidecar_service_url ) {
	define( 'SHOP_SIDECAR_SERVICE_URL', $sidecar_service_url );
}

if ( $sidecar_cli ) {
	// wp-settings.php expects what a web request has.
	$_SERVER['HTTP_HOST']   = 'shop.example.dk';
	$_SERVER['SERVER_NAME'] = 'shop.example.dk';
	$_SERVER['REQUEST_URI'] = '/';
	$_SERVER['HTTPS']       = 'on';
	if ( ! isset( $_SERVER['REQUEST_METHOD'] ) ) {
		$_SERVER['REQUEST_METHOD'] = 'GET';
	}
}

if ( defined( 'SIDECAR_INSTALLING' ) ) {
	// Before wp_install() there are no tables: without this WordPress would redirect to install.php and exit.
	define( 'WP_INSTALLING', true );
}

require_once ABSPATH . 'wp-settings.php';
