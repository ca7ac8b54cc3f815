<?php
/**
 * Plugin Name: Sidecar test provider hosts
 * Description: Test only (provider-plugins.ts). The providers' own plugins call their providers at fixed hosts
 * through WordPress's HTTP API: the card gateway's at https://api.reepay.com (its includes/Api.php), the wallet's
 * recurring API at https://api.vipps.no, or https://apitest.vipps.no in its test mode (its
 * recurring/includes/wc-vipps-recurring-api.php get_base_url). On `pre_http_request` this sends those calls to the
 * loopback fakes the test started, named in the option `sidecar_provider_fakes` ({"card": URL, "wallet": URL}),
 * with the same method, path, query, headers and body, and hands the fake's answer back as WordPress's own. Any
 * other host of theirs (e.g. the card gateway's checkout-api, never used by a refund) is refused, never sent out.
 */

defined( 'ABSPATH' ) || exit;

const SIDECAR_PROVIDER_HOSTS = array(
	'api.reepay.com'          => 'card',
	'checkout-api.reepay.com' => null,
	'api.vipps.no'            => 'wallet',
	'apitest.vipps.no'        => 'wallet',
);

add_filter(
	'pre_http_request',
	static function ( $pre, array $args, string $url ) {
		if ( false !== $pre ) {
			return $pre;
		}
		$parts = wp_parse_url( $url );
		$host  = strtolower( (string) ( $parts['host'] ?? '' ) );
		if ( ! array_key_exists( $host, SIDECAR_PROVIDER_HOSTS ) ) {
			return $pre;
		}
		$fakes  = (array) get_option( 'sidecar_provider_fakes', array() );
		$target = SIDECAR_PROVIDER_HOSTS[ $host ];
		if ( null === $target || empty( $fakes[ $target ] ) ) {
			return new WP_Error( 'sidecar_not_routed', "No test fake answers $host" );
		}
		$to = rtrim( (string) $fakes[ $target ], '/' ) . ( $parts['path'] ?? '/' ) . ( isset( $parts['query'] ) ? '?' . $parts['query'] : '' );

		$headers = array();
		foreach ( (array) ( $args['headers'] ?? array() ) as $name => $value ) {
			if ( 'content-length' === strtolower( (string) $name ) ) {
				continue; // curl sets it from the body
			}
			$headers[] = $name . ': ' . $value;
		}
		$curl = curl_init( $to );
		curl_setopt_array(
			$curl,
			array(
				CURLOPT_CUSTOMREQUEST  => strtoupper( (string) ( $args['method'] ?? 'GET' ) ),
				CURLOPT_HTTPHEADER     => $headers,
				CURLOPT_RETURNTRANSFER => true,
				CURLOPT_HEADER         => true,
				CURLOPT_TIMEOUT        => 30,
			)
		);
		if ( isset( $args['body'] ) && '' !== $args['body'] && null !== $args['body'] ) {
			curl_setopt( $curl, CURLOPT_POSTFIELDS, is_array( $args['body'] ) ? http_build_query( $args['body'] ) : (string) $args['body'] );
		}
		$raw = curl_exec( $curl );
		if ( false === $raw ) {
			$error = curl_error( $curl );
			curl_close( $curl );
			return new WP_Error( 'http_request_failed', $error );
		}
		$status      = (int) curl_getinfo( $curl, CURLINFO_RESPONSE_CODE );
		$header_size = (int) curl_getinfo( $curl, CURLINFO_HEADER_SIZE );
		curl_close( $curl );
		$answer_headers = array();
		foreach ( preg_split( '/\r?\n/', substr( $raw, 0, $header_size ) ) as $line ) {
			if ( false !== strpos( $line, ':' ) ) {
				list( $name, $value )                       = explode( ':', $line, 2 );
				$answer_headers[ strtolower( trim( $name ) ) ] = trim( $value );
			}
		}
		return array(
			'headers'  => new WpOrg\Requests\Utility\CaseInsensitiveDictionary( $answer_headers ),
			'body'     => (string) substr( $raw, $header_size ),
			'response' => array( 'code' => $status, 'message' => get_status_header_desc( $status ) ),
			'cookies'  => array(),
			'filename' => null,
		);
	},
	10,
	3
);
