<?php
/**
 * Test-only router for PHP's built-in web server, serving one test shop (support/serve-over-http.ts):
 *
 *   SIDECAR_WEB_DIR=<served folder> php -S 127.0.0.1:<port> -t <served folder> http-router.php
 *
 * The served folder is the WordPress tree with its own wp-config.php (which requires bootstrap.php): the top-level
 * PHP files are copies, so wp-load.php takes the served folder for ABSPATH and loads that wp-config.php (the
 * release's own, Debian's, reads /etc/wordpress); wp-admin and wp-includes are links to the release. Scripts
 * below the top level (wp-admin/admin-ajax.php...) find wp-load.php by their real folder, so for them ABSPATH is
 * defined here first, which wp-load.php keeps.
 *
 * Static files and top-level scripts are left to the server; a path that is not a file goes to index.php, as a
 * web server's rewrite rules for WordPress do.
 */

// The server logs connections only: each request when it ends, with its status and time, for a failing test's
// message (ServedShop.output()).
$sidecar_started = microtime( true );
register_shutdown_function(
	static function () use ( $sidecar_started ) {
		file_put_contents(
			'php://stderr',
			sprintf( "sidecar-http: [%d] %s %s -> %d in %d ms\n", getmypid(), $_SERVER['REQUEST_METHOD'] ?? '?', $_SERVER['REQUEST_URI'] ?? '?', http_response_code(), ( microtime( true ) - $sidecar_started ) * 1000 )
		);
	}
);

$sidecar_web  = rtrim( (string) getenv( 'SIDECAR_WEB_DIR' ), '/' );
$sidecar_path = rawurldecode( (string) parse_url( $_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH ) );
if ( '' === $sidecar_web || false !== strpos( $sidecar_path, '..' ) ) {
	http_response_code( 400 );
	exit;
}
$sidecar_file = $sidecar_web . $sidecar_path;
if ( is_dir( $sidecar_file ) ) {
	$sidecar_file = rtrim( $sidecar_file, '/' ) . '/index.php';
	if ( dirname( $sidecar_file ) === $sidecar_web ) {
		return false; // the server runs the folder's index.php itself
	}
}
if ( is_file( $sidecar_file ) && ( '.php' !== substr( $sidecar_file, -4 ) || dirname( $sidecar_file ) === $sidecar_web ) ) {
	return false; // a static file, or a top-level script: the server sends or runs it as it is
}
if ( ! is_file( $sidecar_file ) ) {
	$sidecar_file = "$sidecar_web/index.php"; // WordPress routes it (pretty permalinks)
} else {
	define( 'ABSPATH', "$sidecar_web/" );
}
$_SERVER['SCRIPT_FILENAME'] = $sidecar_file;
$_SERVER['SCRIPT_NAME']     = substr( $sidecar_file, strlen( $sidecar_web ) );
$_SERVER['PHP_SELF']        = $_SERVER['SCRIPT_NAME'];
chdir( dirname( $sidecar_file ) );
// In the global scope, as when the server runs a script itself.
require $sidecar_file;
