<?php
/**
 * Test-only CLI driver for one shop: `php driver.php COMMAND` with the command's JSON arguments on stdin.
 * Prints MARKER, a newline and one JSON document on stdout; anything WordPress or WooCommerce prints before it is
 * not part of the answer. On failure: the error on stderr and a non-zero exit code.
 * The shop is chosen by the environment bootstrap.php reads.
 */

const SIDECAR_MARKER = '@@SIDECAR-JSON@@';

$sidecar_started = microtime( true );
$sidecar_command = $argv[1] ?? '';
$sidecar_input   = stream_get_contents( STDIN );
$sidecar_args    = '' === trim( (string) $sidecar_input ) ? array() : json_decode( $sidecar_input, true, 512, JSON_THROW_ON_ERROR );

if ( 'install' === $sidecar_command ) {
	define( 'SIDECAR_INSTALLING', true );
}
if ( 'install_setup' === $sidecar_command ) {
	// Subscriptions runs its setup on an administrator's first page load (it checks the user while loading):
	// make this process that first load. WordPress takes hooks added before it loads in this form.
	$GLOBALS['wp_filter']['determine_current_user'][99]['sidecar_admin'] = array(
		'function'      => static fn() => 1,
		'accepted_args' => 1,
	);
}

require __DIR__ . '/bootstrap.php';
require __DIR__ . '/lib/commands.php';
require __DIR__ . '/lib/snapshot.php';

$sidecar_loaded = microtime( true );
try {
	$sidecar_handler = SIDECAR_COMMANDS[ $sidecar_command ] ?? null;
	if ( null === $sidecar_handler ) {
		throw new InvalidArgumentException( "unknown command '$sidecar_command'; known: " . implode( ', ', array_keys( SIDECAR_COMMANDS ) ) );
	}
	$sidecar_result = $sidecar_handler( is_array( $sidecar_args ) ? $sidecar_args : array() );
} catch ( Throwable $e ) {
	fwrite( STDERR, sprintf( "driver.php %s failed: %s: %s\n  at %s:%d\n%s\n", $sidecar_command, get_class( $e ), $e->getMessage(), $e->getFile(), $e->getLine(), $e->getTraceAsString() ) );
	exit( 1 );
}

// Output left in buffers (WooCommerce can leave a rendered e-mail in one) goes out before the marker.
while ( ob_get_level() > 0 ) {
	ob_end_flush();
}
$sidecar_json = json_encode(
	array(
		'result' => $sidecar_result,
		'timing' => array(
			'load_ms'    => (int) round( ( $sidecar_loaded - $sidecar_started ) * 1000 ),
			'command_ms' => (int) round( ( microtime( true ) - $sidecar_loaded ) * 1000 ),
		),
	),
	JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR
);
echo "\n" . SIDECAR_MARKER . "\n" . $sidecar_json . "\n";
exit( 0 );
