<?php
/**
 * Shop Sidecar companion: what the shop tells the service (loaded by ../../shop-sidecar-companion.php).
 *
 * One renewal, one payment: a renewal the shop settled itself (paid through any gateway's payment_complete(), marked
 * processing or completed by staff, cancelled) must not be charged again by the service, which may have a charge
 * open for it at a provider. The service finds such orders in the database within a minute; this tells it at once.
 * When a renewal order that awaited payment (pending, failed, on-hold) moves to any other status, the companion
 * sends, after the request's own work is done:
 *
 *   POST {service}payment-hub/v1/shop/order-status-changed
 *   Content-Type: application/json
 *   X-Shop-Sidecar-Timestamp: <unix seconds>
 *   X-Shop-Sidecar-Signature: <lowercase hex HMAC-SHA256>
 *   {"order_id":123,"from":"failed","to":"processing"}
 *
 * signed as the service signs its hand-over (woocommerce-changes.php), with a key of its own purpose:
 *   key       = hash_hmac('sha256', 'shop-sidecar-shop-events-v1', wp_salt('logged_in'))
 *   signature = hash_hmac('sha256', timestamp . "\n" . body, key)
 * {service} is SHOP_SIDECAR_SERVICE_URL when wp-config.php defines it (server to server, such as
 * http://127.0.0.1:8080/), else the staff panels' API root (SHOP_SIDECAR_API_ROOT, default https://<shop>/wp-json/,
 * which the shop's web server passes to the service). The service reads the order's status itself: the notice only
 * says which order to look at. A notice that does not arrive costs time only, and is logged (WooCommerce → Status →
 * Logs, source shop-sidecar).
 */

defined( 'ABSPATH' ) || exit;

/** The statuses of an order that still awaits its money. */
const SHOP_SIDECAR_AWAITING_PAYMENT = array( 'pending', 'failed', 'on-hold' );
/** Seconds a notice may take; the service answers once the charge is withdrawn, without waiting for the provider. */
const SHOP_SIDECAR_NOTICE_TIMEOUT = 3;

add_action( 'woocommerce_order_status_changed', 'shop_sidecar_note_order_status_change', 10, 4 );

/**
 * Notes a renewal order that no longer awaits payment, to tell the service at the end of the request.
 *
 * @param int           $order_id The order.
 * @param string        $from     The status it left.
 * @param string        $to       Its status now.
 * @param WC_Order|null $order    The order.
 */
function shop_sidecar_note_order_status_change( $order_id, $from, $to, $order = null ) {
	if ( ! in_array( $from, SHOP_SIDECAR_AWAITING_PAYMENT, true ) || in_array( $to, SHOP_SIDECAR_AWAITING_PAYMENT, true ) ) {
		return;
	}
	// A change the service handed over is its own decision: telling it back would only echo it.
	if ( shop_sidecar_applying_change() ) {
		return;
	}
	if ( function_exists( 'wcs_order_contains_renewal' ) && ! wcs_order_contains_renewal( $order instanceof WC_Order ? $order : $order_id ) ) {
		return;
	}
	shop_sidecar_pending_notices( (int) $order_id, array( 'from' => (string) $from, 'to' => (string) $to ) );
}

/**
 * The notices this request will send, one per order (the first status it left, the last it moved to); adding the
 * first one schedules the sending.
 *
 * @param int|null   $order_id The order to add, or null to read them.
 * @param array|null $change   from and to.
 * @return array<int, array{from: string, to: string}>
 */
function shop_sidecar_pending_notices( $order_id = null, $change = null ) {
	static $notices = array();
	if ( null !== $order_id ) {
		if ( ! $notices ) {
			// Last, after WordPress and other plugins have written their answer.
			add_action( 'shutdown', 'shop_sidecar_send_notices', PHP_INT_MAX );
		}
		$notices[ $order_id ] = array(
			'from' => $notices[ $order_id ]['from'] ?? $change['from'],
			'to'   => $change['to'],
		);
	}
	return $notices;
}

/** Where the notices go: SHOP_SIDECAR_SERVICE_URL, else where the staff panels reach the service. */
function shop_sidecar_service_url() {
	return defined( 'SHOP_SIDECAR_SERVICE_URL' ) ? trailingslashit( (string) SHOP_SIDECAR_SERVICE_URL ) : shop_sidecar_api_root();
}

/** Sends this request's notices, once its answer has gone to the customer or staff member where the server allows. */
function shop_sidecar_send_notices() {
	$notices = shop_sidecar_pending_notices();
	if ( ! $notices ) {
		return;
	}
	// As WooCommerce's own deferred e-mails do: under PHP-FPM (or LiteSpeed) the page is finished first, so nobody waits for the service.
	if ( is_callable( 'fastcgi_finish_request' ) ) {
		fastcgi_finish_request();
	} elseif ( is_callable( 'litespeed_finish_request' ) ) {
		litespeed_finish_request();
	}
	$key = hash_hmac( 'sha256', 'shop-sidecar-shop-events-v1', wp_salt( 'logged_in' ) );
	$url = shop_sidecar_service_url() . 'payment-hub/v1/shop/order-status-changed';
	while ( $notices ) {
		$order_id = array_key_first( $notices );
		$change   = $notices[ $order_id ];
		unset( $notices[ $order_id ] );
		$body      = wp_json_encode( array( 'order_id' => $order_id, 'from' => $change['from'], 'to' => $change['to'] ) );
		$timestamp = (string) time();
		$answer    = wp_remote_post(
			$url,
			array(
				'timeout'     => SHOP_SIDECAR_NOTICE_TIMEOUT,
				'redirection' => 0,
				'headers'     => array(
					'Content-Type'             => 'application/json',
					'X-Shop-Sidecar-Timestamp' => $timestamp,
					'X-Shop-Sidecar-Signature' => hash_hmac( 'sha256', $timestamp . "\n" . $body, $key ),
				),
				'body'        => $body,
			)
		);
		if ( ! is_wp_error( $answer ) && 202 === (int) wp_remote_retrieve_response_code( $answer ) ) {
			continue;
		}
		$why = is_wp_error( $answer ) ? $answer->get_error_message() : wp_remote_retrieve_response_code( $answer ) . ' ' . substr( wp_remote_retrieve_body( $answer ), 0, 300 );
		shop_sidecar_log_notice_failure( "the service did not take the notice that order {$order_id} moved from {$change['from']} to {$change['to']} ({$url}: {$why})" );
		if ( is_wp_error( $answer ) && $notices ) {
			// Not reached (down, a timeout): the next notices (a bulk action in WP admin) would each wait as long for nothing.
			shop_sidecar_log_notice_failure( 'the notices of orders ' . implode( ', ', array_keys( $notices ) ) . ' were not sent' );
			return;
		}
	}
}

/** A notice that did not reach the service, as a warning: the service finds the same in the database, only later. */
function shop_sidecar_log_notice_failure( $what ) {
	if ( function_exists( 'wc_get_logger' ) ) {
		wc_get_logger()->warning( "Shop sidecar: {$what}; the service finds the change in the database within a minute.", array( 'source' => 'shop-sidecar' ) );
	}
}
