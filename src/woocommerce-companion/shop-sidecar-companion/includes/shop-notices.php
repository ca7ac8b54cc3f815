<?php
/**
 * Shop Sidecar companion: what the shop tells the service (loaded by ../../shop-sidecar-companion.php).
 *
 * One renewal, one payment: a renewal the shop settled itself (paid through any gateway's payment_complete(), marked
 * processing or completed by staff, cancelled), or one that no longer wants money (its subscription cancelled by the
 * customer in My Account or by staff, pending cancellation, expired, trashed or deleted; the order itself trashed or
 * deleted) must not be charged by the service, which may have a charge open for it at a provider. The service finds
 * such orders in the database within a minute; this tells it at once. For each renewal order that awaits payment
 * (pending, failed, on-hold) and
 * - moves to any other status (from "failed" to "processing"), or
 * - is trashed or deleted (from "failed" to "trash" or "deleted"), or
 * - whose subscription moves to cancelled, pending-cancel, expired, or is trashed or deleted (from
 *   "subscription:on-hold" to "subscription:cancelled", "subscription:trash", "subscription:deleted"),
 * the companion sends, after the request's own work is done:
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
 * which the shop's web server passes to the service). The service reads the order and its subscription itself: the
 * notice only says which order to look at (from and to are only logged). A notice that does not arrive costs time only, and is logged (WooCommerce → Status →
 * Logs, source shop-sidecar).
 */

defined( 'ABSPATH' ) || exit;

/** The statuses of an order that still awaits its money. */
const SHOP_SIDECAR_AWAITING_PAYMENT = array( 'pending', 'failed', 'on-hold' );
/** Seconds a notice may take; the service answers once the charge is withdrawn, without waiting for the provider. */
const SHOP_SIDECAR_NOTICE_TIMEOUT = 3;

/** The statuses a subscription moves to when its renewals want no more money (WCS_Retry_Manager::maybe_cancel_retry's twin). */
const SHOP_SIDECAR_SUBSCRIPTION_ENDED = array( 'cancelled', 'pending-cancel', 'expired', 'trash' );
/** The longest from or to the service takes. */
const SHOP_SIDECAR_NOTICE_STATUS_LENGTH = 40;

add_action( 'woocommerce_order_status_changed', 'shop_sidecar_note_order_status_change', 10, 4 );
add_action( 'woocommerce_subscription_status_updated', 'shop_sidecar_note_subscription_status_change', 10, 3 );
// An order or subscription trashed or deleted, noted before it goes (a deleted one cannot be read afterwards), as
// Subscriptions' own retries are cancelled (WCS_Retry_Manager::maybe_cancel_retry_for_order): in posts storage on
// WordPress's post hooks, which every way of trashing fires (WP admin's edit screen and list, wp_trash_post(),
// WC_Order::delete()); in HPOS on WooCommerce's and Subscriptions' data store hooks. After Subscriptions' own, which
// cancels a subscription it is about to trash or delete. Both fire in HPOS with sync: one notice per order all the same.
add_action( 'wp_trash_post', 'shop_sidecar_note_post_trashed', 20, 1 );
add_action( 'before_delete_post', 'shop_sidecar_note_post_deleted', 20, 1 );
add_action( 'woocommerce_before_trash_order', 'shop_sidecar_note_trashed', 20, 1 );
add_action( 'woocommerce_before_delete_order', 'shop_sidecar_note_deleted', 20, 1 );
add_action( 'woocommerce_before_trash_subscription', 'shop_sidecar_note_trashed', 20, 1 );
add_action( 'woocommerce_before_delete_subscription', 'shop_sidecar_note_deleted', 20, 1 );

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
 * Notes each renewal order awaiting payment of a subscription that moved to cancelled (the customer in My Account,
 * staff), pending-cancel, expired or trash: its renewals want no more money.
 *
 * @param WC_Subscription $subscription The subscription.
 * @param string          $to           Its status now.
 * @param string          $from         The status it left.
 */
function shop_sidecar_note_subscription_status_change( $subscription, $to, $from ) {
	if ( ! in_array( $to, SHOP_SIDECAR_SUBSCRIPTION_ENDED, true ) || shop_sidecar_applying_change() ) {
		return;
	}
	shop_sidecar_note_renewals_awaiting_payment( $subscription, "subscription:{$from}", "subscription:{$to}" );
}

/** A post trashed: an order or a subscription in posts storage (HPOS's placeholders and synced copies are left to the hooks below). */
function shop_sidecar_note_post_trashed( $post_id ) {
	if ( in_array( get_post_type( $post_id ), array( 'shop_order', 'shop_subscription' ), true ) ) {
		shop_sidecar_note_trashed( $post_id );
	}
}

/** A post about to be deleted: an order or a subscription in posts storage. */
function shop_sidecar_note_post_deleted( $post_id ) {
	if ( in_array( get_post_type( $post_id ), array( 'shop_order', 'shop_subscription' ), true ) ) {
		shop_sidecar_note_deleted( $post_id );
	}
}

/** An order or subscription about to be trashed. */
function shop_sidecar_note_trashed( $id ) {
	shop_sidecar_note_removal( $id, 'trash' );
}

/** An order or subscription about to be deleted. */
function shop_sidecar_note_deleted( $id ) {
	shop_sidecar_note_removal( $id, 'deleted' );
}

/**
 * Notes a renewal order awaiting payment that is about to be trashed or deleted, or each such renewal of a
 * subscription about to be.
 *
 * @param int    $id What goes.
 * @param string $to trash or deleted.
 */
function shop_sidecar_note_removal( $id, $to ) {
	if ( shop_sidecar_applying_change() || ! function_exists( 'wc_get_order' ) ) {
		return;
	}
	$object = wc_get_order( $id );
	if ( ! $object instanceof WC_Order ) {
		return;
	}
	if ( function_exists( 'wcs_is_subscription' ) && wcs_is_subscription( $object ) ) {
		shop_sidecar_note_renewals_awaiting_payment( $object, 'subscription:' . $object->get_status(), "subscription:{$to}" );
		return;
	}
	$from = $object->get_status();
	if ( ! in_array( $from, SHOP_SIDECAR_AWAITING_PAYMENT, true ) ) {
		return;
	}
	if ( function_exists( 'wcs_order_contains_renewal' ) && ! wcs_order_contains_renewal( $object ) ) {
		return;
	}
	shop_sidecar_pending_notices( $object->get_id(), array( 'from' => $from, 'to' => $to ) );
}

/**
 * Notes each renewal order of the subscription that awaits payment.
 *
 * @param WC_Subscription $subscription The subscription.
 * @param string          $from         What the subscription was.
 * @param string          $to           What it is now.
 */
function shop_sidecar_note_renewals_awaiting_payment( $subscription, $from, $to ) {
	if ( ! is_object( $subscription ) || ! is_callable( array( $subscription, 'get_related_orders' ) ) ) {
		return;
	}
	foreach ( $subscription->get_related_orders( 'all', 'renewal' ) as $order ) {
		if ( $order instanceof WC_Order && $order->has_status( SHOP_SIDECAR_AWAITING_PAYMENT ) ) {
			shop_sidecar_pending_notices( $order->get_id(), array( 'from' => $from, 'to' => $to ) );
		}
	}
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
			'from' => $notices[ $order_id ]['from'] ?? substr( $change['from'], 0, SHOP_SIDECAR_NOTICE_STATUS_LENGTH ),
			'to'   => substr( $change['to'], 0, SHOP_SIDECAR_NOTICE_STATUS_LENGTH ),
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
