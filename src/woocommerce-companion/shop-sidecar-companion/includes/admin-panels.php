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
 * type (posts: the post type; HPOS: woocommerce_page_wc-orders[--shop_subscription]). In the main column with
 * priority high, added after WooCommerce's and Subscriptions' own (hook priority 40): right below their data
 * and items boxes, above Downloads and Custom Fields, where staff look first.
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
		add_meta_box( 'shop-sidecar-support', __( 'Support', 'shop-sidecar-companion' ), 'shop_sidecar_render_support_panel', $subscription_screen, 'normal', 'high', array( 'id' => $id ) );
	} elseif ( $current === $order_screen && shop_sidecar_order_has_payments( $id ) ) {
		add_meta_box( 'shop-sidecar-payments', __( 'Payments', 'shop-sidecar-companion' ), 'shop_sidecar_render_payments_panel', $order_screen, 'normal', 'high', array( 'id' => $id ) );
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
 * How the shop shows money and time on this screen, for the script to show them the same way: WooCommerce's
 * price format (symbol of the object's currency, separators, decimals, symbol position), the shop's time zone
 * (wp_timezone_string(): a zone name, or a fixed offset such as +02:00) with its offset now, and the user's
 * locale for dates and percentages.
 *
 * @param string $currency The order's or subscription's currency.
 */
function shop_sidecar_shop_formats( $currency ) {
	$currency = (string) $currency;
	if ( '' === $currency ) {
		$currency = get_woocommerce_currency();
	}
	return array(
		'currency'          => $currency,
		'currencySymbol'    => html_entity_decode( get_woocommerce_currency_symbol( $currency ), ENT_QUOTES, 'UTF-8' ),
		'currencyPosition'  => (string) get_option( 'woocommerce_currency_pos', 'left' ),
		'decimalSeparator'  => wc_get_price_decimal_separator(),
		'thousandSeparator' => wc_get_price_thousand_separator(),
		'decimals'          => wc_get_price_decimals(),
		'timeZone'          => wp_timezone_string(),
		'offsetMinutes'     => (int) round( wp_timezone()->getOffset( new DateTimeImmutable( 'now' ) ) / 60 ),
		'locale'            => str_replace( '_', '-', get_user_locale() ),
	);
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
	// A pause end left on a subscription that is no longer on hold is no pause (see shop_sidecar_pause_ends_with_hold()).
	$pause_end = $subscription->has_status( 'on-hold' ) ? (string) $subscription->get_meta( '_schedule_auto_reactivation' ) : '';
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
			'shop'            => shop_sidecar_shop_formats( $subscription->get_currency() ),
		)
	);
	shop_sidecar_print_drawn_fields( $subscription );
}

function shop_sidecar_render_payments_panel( $object, array $box ) {
	$order = wc_get_order( (int) $box['args']['id'] );
	if ( ! $order ) {
		return;
	}
	shop_sidecar_panel_placeholder(
		'payments',
		array(
			'orderId'      => $order->get_id(),
			'status'       => $order->get_status(),
			'statusLabels' => shop_sidecar_status_labels( wc_get_order_statuses() ),
			'shop'         => shop_sidecar_shop_formats( $order->get_currency() ),
		)
	);
	shop_sidecar_print_drawn_fields( $order );
}

/*
 * Nothing the panels do is undone by the page around them.
 *
 * The panels' actions change the subscription or order through the service while WooCommerce's own boxes on the
 * same screen still hold the values the page was drawn with: on a subscription, the status select of Subscription
 * Data and the dates of Schedule; on an order, the status select and the transaction ID of Order Data (a payment
 * taken after asking the provider, or by Charge now, sets both). WooCommerce's Update posts every one of them and
 * saves them all, so a stale form would put a paused subscription back to active with its old next payment, or a
 * paid order back to failed. Two things prevent it:
 *
 * 1. The panel's script fills WooCommerce's fields with the new state right after an action, and once WooCommerce
 *    has applied the change, with WooCommerce's own values and notes (the routes below). Fields the staff member
 *    had already changed are left as they are: their edit is theirs to save.
 * 2. This guard, for whatever the script could not do (another tab, the worker's dunning, a webhook, no
 *    JavaScript): the page posts, beside each guarded field, the value it was drawn with
 *    (shop_sidecar_drawn[field], kept up to date by the script). On Update, a field whose posted value is still
 *    the drawn one, while the object's own value has changed since, is saved with the object's own value: the
 *    staff member did not change it, so the newer change stands. A field the staff member did change is saved as
 *    they chose.
 */

/**
 * The fields of WooCommerce's boxes that a panel action (or the service behind the staff member's back) changes,
 * keyed by the names the save handlers read, with the values the boxes draw for the object as it is.
 * Subscriptions: WCS_Meta_Box_Subscription_Data::save reads order_status, WCS_Meta_Box_Schedule::save
 * <date type>_timestamp_utc (GMT seconds). Orders: WC_Meta_Box_Order_Data::save reads order_status and
 * _transaction_id.
 *
 * @param WC_Order $object The subscription or order.
 * @return array<string,string>
 */
function shop_sidecar_form_fields( $object ) {
	$fields = array( 'order_status' => 'wc-' . $object->get_status() );
	if ( ! ( function_exists( 'wcs_is_subscription' ) && wcs_is_subscription( $object ) ) ) {
		$fields['_transaction_id'] = (string) $object->get_transaction_id();
		return $fields;
	}
	foreach ( array_keys( wcs_get_subscription_date_types() ) as $date_type ) {
		$key = wcs_normalise_date_type_key( $date_type );
		if ( 'last_order_date_created' === $key ) {
			continue;
		}
		$fields[ $date_type . '_timestamp_utc' ] = (string) $object->get_time( $key, 'gmt' );
	}
	return $fields;
}

/** The values the page's WooCommerce fields were drawn with, posted with the form (inside the edit form). */
function shop_sidecar_print_drawn_fields( $object ) {
	echo '<div class="shop-sidecar-drawn" hidden>';
	foreach ( shop_sidecar_form_fields( $object ) as $field => $value ) {
		printf( '<input type="hidden" name="shop_sidecar_drawn[%s]" value="%s" />', esc_attr( $field ), esc_attr( $value ) );
	}
	echo '</div>';
}

// Posts storage: before edit_post() writes the post, whose post_status the form posts too (the hidden field
// Subscription Data draws with the page's status, written as it is, without Subscriptions' status change).
add_action(
	'admin_action_editpost',
	static function () {
		// phpcs:ignore WordPress.Security.NonceVerification.Missing -- only moves posted values to what is stored; post.php checks the nonce next.
		shop_sidecar_keep_changes_since_drawn( isset( $_POST['post_ID'] ) ? (int) $_POST['post_ID'] : 0 );
	},
	1
);
// HPOS storage (and posts, if the above did not run): before WooCommerce's and Subscriptions' own save handlers
// (priority 10 and later).
add_action( 'woocommerce_process_shop_order_meta', 'shop_sidecar_keep_changes_since_drawn', 5, 1 );

/**
 * The guard (2. above). It only moves posted values to the ones stored, and runs once per saved object.
 *
 * @param int $id The order or subscription saved.
 */
function shop_sidecar_keep_changes_since_drawn( $id ) {
	global $wpdb;
	static $done = array();
	// phpcs:disable WordPress.Security.NonceVerification.Missing -- see above.
	$id = (int) $id;
	if ( $id <= 0 || isset( $done[ $id ] ) || empty( $_POST['shop_sidecar_drawn'] ) || ! is_array( $_POST['shop_sidecar_drawn'] ) ) {
		return;
	}
	if ( ! current_user_can( 'edit_shop_orders' ) || ! function_exists( 'wc_get_order' ) ) {
		return;
	}
	$done[ $id ] = true;
	// The lock the companion applies the service's changes under: no change lands between this comparison and
	// the save (it waits, and is applied after). Released when the save is done, or with the connection.
	$lock = 'shop_sidecar_' . $wpdb->prefix . $id;
	if ( '1' === (string) $wpdb->get_var( $wpdb->prepare( 'SELECT GET_LOCK(%s, %d)', $lock, 10 ) ) ) {
		add_action(
			'woocommerce_process_shop_order_meta',
			static function () use ( $wpdb, $lock ) {
				$wpdb->query( $wpdb->prepare( 'SELECT RELEASE_LOCK(%s)', $lock ) );
			},
			PHP_INT_MAX
		);
	}
	$object = wc_get_order( $id );
	if ( ! $object || ! ( $object instanceof WC_Order ) ) {
		return;
	}
	// The post's own status is never the form's to change: WooCommerce changes it from order_status, with its
	// consequences (scheduled payments, e-mails, notes); written as posted, it would put back a stale status unseen.
	if ( isset( $_POST['post_status'] ) ) {
		$_POST['post_status'] = 'wc-' . $object->get_status();
	}
	$drawn = wp_unslash( $_POST['shop_sidecar_drawn'] );
	$kept  = array();
	foreach ( shop_sidecar_form_fields( $object ) as $field => $now ) {
		if ( ! isset( $drawn[ $field ], $_POST[ $field ] ) || ! is_string( $drawn[ $field ] ) || ! is_string( $_POST[ $field ] ) ) {
			continue;
		}
		$posted = wc_clean( wp_unslash( $_POST[ $field ] ) );
		$base   = wc_clean( $drawn[ $field ] );
		if ( $posted === $base && $now !== $base ) {
			$_POST[ $field ] = $now;
			$kept[]          = $field;
		}
	}
	// phpcs:enable
	if ( ! $kept ) {
		return;
	}
	$subscription = function_exists( 'wcs_is_subscription' ) && wcs_is_subscription( $object );
	$message      = $subscription
		? __( 'The subscription\'s status or dates had changed since this page was opened. The newer values were kept; your other changes were saved.', 'shop-sidecar-companion' )
		: __( 'The order\'s status or payment had changed since this page was opened. The newer values were kept; your other changes were saved.', 'shop-sidecar-companion' );
	if ( function_exists( 'wcs_add_admin_notice' ) ) {
		wcs_add_admin_notice( $message, 'success' );
	}
}

add_action( 'woocommerce_subscription_status_updated', 'shop_sidecar_pause_ends_with_hold', 10, 3 );

/**
 * A subscription that leaves on-hold, however (WooCommerce's Update, the customer, a paid renewal), is no longer
 * paused: its pause end goes, so neither the panel nor the worker takes it for a pause still running.
 *
 * @param WC_Subscription $subscription The subscription.
 * @param string          $new_status   Its status now.
 * @param string          $old_status   Its status before.
 */
function shop_sidecar_pause_ends_with_hold( $subscription, $new_status, $old_status ) {
	if ( 'on-hold' !== $old_status || 'on-hold' === $new_status || '' === (string) $subscription->get_meta( '_schedule_auto_reactivation' ) ) {
		return;
	}
	$subscription->delete_meta_data( '_schedule_auto_reactivation' );
	$subscription->save_meta_data();
}

add_action(
	'rest_api_init',
	static function () {
		$args = array( 'id' => array( 'validate_callback' => static fn( $value ) => ctype_digit( (string) $value ) ) );
		register_rest_route(
			'shop-sidecar/v1',
			'/subscriptions/(?P<id>\d+)/edit-screen',
			array(
				'methods'             => 'GET',
				'callback'            => 'shop_sidecar_edit_screen_fields',
				'permission_callback' => static fn() => current_user_can( 'edit_shop_orders' ),
				'args'                => $args,
			)
		);
		register_rest_route(
			'shop-sidecar/v1',
			'/orders/(?P<id>\d+)/edit-screen',
			array(
				'methods'             => 'GET',
				'callback'            => 'shop_sidecar_order_edit_screen_fields',
				'permission_callback' => static fn() => current_user_can( 'edit_shop_orders' ),
				'args'                => $args,
			)
		);
	}
);

/**
 * What WooCommerce's boxes on the subscription's edit screen would draw now (the panel's script fills them from
 * this after an action): the fields Subscriptions' save reads, the status select's choices, the notes list, the
 * panel's facts; and how many of the service's changes to it are still waiting to be applied.
 *
 * @param WP_REST_Request $request The request.
 * @return array|WP_Error
 */
function shop_sidecar_edit_screen_fields( $request ) {
	$subscription = function_exists( 'wcs_get_subscription' ) ? wcs_get_subscription( (int) $request['id'] ) : false;
	if ( ! $subscription ) {
		return new WP_Error( 'shop_sidecar_not_found', 'No such subscription.', array( 'status' => 404 ) );
	}
	// The status select as WCS_Meta_Box_Subscription_Data draws it: the statuses the subscription can move to.
	$options = array();
	foreach ( wcs_get_subscription_statuses() as $status => $label ) {
		if ( $subscription->can_be_updated_to( $status ) || $subscription->has_status( substr( $status, 3 ) ) ) {
			$options[] = array( 'value' => $status, 'label' => $label );
		}
	}
	$on_hold = $subscription->has_status( 'on-hold' );
	return shop_sidecar_screen_common( $subscription, $options ) + array(
		'next_payment' => shop_sidecar_iso_moment( $subscription->get_date( 'next_payment' ) ),
		'pause_end'    => $on_hold ? shop_sidecar_iso_moment( $subscription->get_meta( '_schedule_auto_reactivation' ) ) : null,
	);
}

/**
 * The same for an order's edit screen (the Payments panel fills Order Data's status and transaction ID and the
 * notes from it after asking the provider or an action on a failed renewal).
 *
 * @param WP_REST_Request $request The request.
 * @return array|WP_Error
 */
function shop_sidecar_order_edit_screen_fields( $request ) {
	$order = wc_get_order( (int) $request['id'] );
	if ( ! $order || ( function_exists( 'wcs_is_subscription' ) && wcs_is_subscription( $order ) ) || 'shop_order_refund' === $order->get_type() ) {
		return new WP_Error( 'shop_sidecar_not_found', 'No such order.', array( 'status' => 404 ) );
	}
	// Order Data's status select lists every order status.
	$options = array();
	foreach ( wc_get_order_statuses() as $status => $label ) {
		$options[] = array( 'value' => $status, 'label' => $label );
	}
	return shop_sidecar_screen_common( $order, $options );
}

/**
 * What both screens share: the fields, the status choices, WooCommerce's notes list (its own view), and how
 * many of the service's changes to the object wait to be applied.
 *
 * @param WC_Order $object  The subscription or order.
 * @param array    $options The status select's choices.
 */
function shop_sidecar_screen_common( $object, array $options ) {
	global $wpdb;
	$id       = $object->get_id();
	$table    = $wpdb->prefix . 'sidecar_woocommerce_changes';
	$suppress = $wpdb->suppress_errors( true ); // The service's table exists only once it has been migrated.
	$waiting  = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$table} WHERE object_id = %d AND status IN ('pending', 'applying')", $id ) );
	$wpdb->suppress_errors( $suppress );

	$notes_html = null;
	$view       = defined( 'WC_ABSPATH' ) ? WC_ABSPATH . 'includes/admin/meta-boxes/views/html-order-notes.php' : '';
	if ( $view && is_file( $view ) ) {
		$notes = wc_get_order_notes( array( 'order_id' => $id ) );
		ob_start();
		include $view;
		$notes_html = (string) ob_get_clean();
	}
	return array(
		'id'             => $id,
		'waiting'        => $waiting,
		'status'         => $object->get_status(),
		'fields'         => shop_sidecar_form_fields( $object ),
		'status_options' => $options,
		'notes_html'     => $notes_html,
	);
}
