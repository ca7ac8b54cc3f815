<?php
/**
 * Shop Sidecar companion: the staff panels in WP admin (loaded by ../../shop-sidecar-companion.php).
 *
 * - "Support" on the subscription edit screen: status, next payment and pause end; cancellation reasons;
 *   pause until a date and force-activate; renewal discounts.
 * - "Payments" on the order edit screen, for orders the service has payments for: payments, planned dunning
 *   attempts, webhooks received, and "Ask the provider now".
 *
 * Both are meta boxes on the screen ids WooCommerce and Subscriptions give their edit screens, in posts and in
 * HPOS storage. The page renders only a placeholder and the facts WooCommerce holds; the script
 * (assets/panels.js) asks the service, from the browser, with the user's own logged-in cookie and a wp_rest
 * nonce (wp.apiFetch). The service must therefore answer on this site's own origin: the shop's web server sends
 * /wp-json/subscription-support/, /wp-json/renewal-discounts/ and /wp-json/payment-hub/ to it (see the service's
 * docs/companion.md, "Staff panels in WP admin", for the nginx lines). Define SHOP_SIDECAR_API_ROOT in
 * wp-config.php when it answers elsewhere on this origin.
 */

defined( 'ABSPATH' ) || exit;

const SHOP_SIDECAR_TEXT_DOMAIN  = 'shop-sidecar-companion';
const SHOP_SIDECAR_PANELS_HANDLE = 'shop-sidecar-panels';

add_action(
	'init',
	static function () {
		// A .l10n.php file next to the .mo is what WordPress 6.5+ reads first; the .mo serves older releases.
		load_textdomain( SHOP_SIDECAR_TEXT_DOMAIN, SHOP_SIDECAR_COMPANION_DIR . '/languages/' . SHOP_SIDECAR_TEXT_DOMAIN . '-' . determine_locale() . '.mo' );
	}
);

add_action( 'add_meta_boxes', 'shop_sidecar_add_admin_panels', 40, 2 );

/**
 * Adds the panels on the edit screens, as Subscriptions adds its own boxes: by the screen id of the object's
 * type (posts: the post type; HPOS: woocommerce_page_wc-orders[--shop_subscription]).
 *
 * @param string            $screen_or_type The screen id (HPOS) or post type (posts).
 * @param WP_Post|WC_Order $object         What the screen edits.
 */
function shop_sidecar_add_admin_panels( $screen_or_type, $object = null ) {
	if ( ! current_user_can( 'edit_shop_orders' ) ) {
		return;
	}
	$id = $object instanceof WP_Post ? (int) $object->ID : ( $object instanceof WC_Order ? (int) $object->get_id() : 0 );
	if ( $id <= 0 ) {
		return;
	}
	$subscription_screen = function_exists( 'wcs_get_page_screen_id' ) ? wcs_get_page_screen_id( 'shop_subscription' ) : 'shop_subscription';
	$order_screen        = function_exists( 'wc_get_page_screen_id' ) ? wc_get_page_screen_id( 'shop-order' ) : 'shop_order';
	$screen              = get_current_screen();
	$current             = $screen ? $screen->id : (string) $screen_or_type;

	if ( $current === $subscription_screen && function_exists( 'wcs_get_subscription' ) && wcs_get_subscription( $id ) ) {
		add_meta_box( 'shop-sidecar-support', __( 'Support', 'shop-sidecar-companion' ), 'shop_sidecar_render_support_panel', $subscription_screen, 'normal', 'default', array( 'id' => $id ) );
	} elseif ( $current === $order_screen && shop_sidecar_order_has_payments( $id ) ) {
		add_meta_box( 'shop-sidecar-payments', __( 'Payments', 'shop-sidecar-companion' ), 'shop_sidecar_render_payments_panel', $order_screen, 'normal', 'default', array( 'id' => $id ) );
	}
}

/**
 * Whether the service has payments for the order, or the providers' own plugins linked it to one (the service
 * can then find it by asking): its payments table, or the order meta `_reepay_order` / `_charge_id`.
 */
function shop_sidecar_order_has_payments( $order_id ) {
	global $wpdb;
	$table = $wpdb->prefix . 'sidecar_payments';
	// phpcs:ignore WordPress.DB.DirectDatabaseQuery -- the service's own table, read once per screen.
	$suppress = $wpdb->suppress_errors( true );
	$known    = $wpdb->get_var( $wpdb->prepare( "SELECT 1 FROM `$table` WHERE order_id = %d LIMIT 1", $order_id ) );
	$wpdb->suppress_errors( $suppress );
	if ( $known ) {
		return true;
	}
	$order = wc_get_order( $order_id );
	return $order && ( '' !== (string) $order->get_meta( '_reepay_order' ) || '' !== (string) $order->get_meta( '_charge_id' ) );
}

/** Where the browser reaches the service on this origin. */
function shop_sidecar_api_root() {
	$root = defined( 'SHOP_SIDECAR_API_ROOT' ) ? (string) SHOP_SIDECAR_API_ROOT : home_url( '/wp-json/' );
	return trailingslashit( apply_filters( 'shop_sidecar_api_root', $root ) );
}

/** The panels' script and style, with the page's own WordPress packages, and their Danish strings. */
function shop_sidecar_enqueue_panels() {
	// plugins_url() takes a file in mu-plugins/ (or plugins/) and gives the address of a file beside it.
	$script  = SHOP_SIDECAR_COMPANION_DIR . '/assets/panels.js';
	$version = (string) filemtime( $script );
	wp_enqueue_style( SHOP_SIDECAR_PANELS_HANDLE, plugins_url( 'panels.css', $script ), array( 'wp-components' ), $version );
	wp_enqueue_script(
		SHOP_SIDECAR_PANELS_HANDLE,
		plugins_url( 'panels.js', $script ),
		array( 'wp-element', 'wp-components', 'wp-api-fetch', 'wp-i18n', 'wp-a11y', 'wp-date', 'wp-dom-ready' ),
		$version,
		true
	);
	wp_set_script_translations( SHOP_SIDECAR_PANELS_HANDLE, SHOP_SIDECAR_TEXT_DOMAIN, SHOP_SIDECAR_COMPANION_DIR . '/languages' );
}

/**
 * A panel's placeholder: the script mounts into it, reading its settings from data-settings. Without
 * JavaScript, it says what is missing.
 */
function shop_sidecar_panel_placeholder( $panel, array $settings ) {
	shop_sidecar_enqueue_panels();
	$settings['apiRoot'] = shop_sidecar_api_root();
	printf(
		'<div class="shop-sidecar-panel" data-panel="%s" data-settings="%s"><p class="shop-sidecar-loading">%s</p></div>',
		esc_attr( $panel ),
		esc_attr( wp_json_encode( $settings ) ),
		esc_html__( 'Loading…', 'shop-sidecar-companion' )
	);
	echo '<noscript><p>' . esc_html__( 'This panel needs JavaScript.', 'shop-sidecar-companion' ) . '</p></noscript>';
}

/**
 * A moment stored in GMT (`Y-m-d H:i:s`, as WooCommerce keeps dates) in ISO 8601 with its zone, as the service
 * writes moments: the panel shows both in the shop's time zone. Null for none.
 */
function shop_sidecar_iso_moment( $gmt ) {
	$gmt = (string) $gmt;
	if ( '' === $gmt || '0' === $gmt || 0 === strpos( $gmt, '0000-00-00' ) ) {
		return null;
	}
	$time = strtotime( $gmt . ' UTC' );
	return false === $time ? null : gmdate( 'Y-m-d\TH:i:s\Z', $time );
}

/** Statuses as WooCommerce lists them (`wc-on-hold` => `On hold`), keyed as objects report them (`on-hold`). */
function shop_sidecar_status_labels( array $statuses ) {
	return array_combine( array_map( static fn( $key ) => substr( $key, 3 ), array_keys( $statuses ) ), array_values( $statuses ) );
}

function shop_sidecar_render_support_panel( $object, array $box ) {
	$subscription = wcs_get_subscription( (int) $box['args']['id'] );
	if ( ! $subscription ) {
		return;
	}
	$pause_end = (string) $subscription->get_meta( '_schedule_auto_reactivation' );
	shop_sidecar_panel_placeholder(
		'support',
		array(
			'subscriptionId'  => $subscription->get_id(),
			// What WooCommerce holds when the page was drawn; after each action the panel shows the service's answer.
			'status'          => $subscription->get_status(),
			'nextPayment'     => shop_sidecar_iso_moment( $subscription->get_date( 'next_payment' ) ),
			'pauseEnd'        => shop_sidecar_iso_moment( $pause_end ),
			'statusLabels'    => shop_sidecar_status_labels( wcs_get_subscription_statuses() ),
			// Tomorrow in the shop's time zone: a pause ends no earlier.
			'earliestPauseEnd' => wp_date( 'Y-m-d', time() + DAY_IN_SECONDS ),
			'canManageDiscounts' => current_user_can( 'manage_woocommerce' ),
			'currency'        => $subscription->get_currency(),
		)
	);
}

function shop_sidecar_render_payments_panel( $object, array $box ) {
	$order = wc_get_order( (int) $box['args']['id'] );
	if ( ! $order ) {
		return;
	}
	shop_sidecar_panel_placeholder(
		'payments',
		array(
			'orderId' => $order->get_id(),
			'status'  => $order->get_status(),
			'statusLabels' => shop_sidecar_status_labels( wc_get_order_statuses() ),
		)
	);
}
