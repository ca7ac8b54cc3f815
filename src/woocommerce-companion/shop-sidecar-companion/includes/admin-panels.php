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
			'orderId' => $order->get_id(),
			'status'  => $order->get_status(),
			'statusLabels' => shop_sidecar_status_labels( wc_get_order_statuses() ),
		)
	);
}

/*
 * Nothing the panel does is undone by the page around it.
 *
 * The Support panel's actions change the subscription through the service while WooCommerce's own boxes on the
 * same screen (the status select of Subscription Data, the dates of Schedule) still hold the values the page was
 * drawn with; WooCommerce's Update posts every one of them and Subscriptions saves them all, so a stale form would
 * put a paused subscription back to active with its old next payment. Two things prevent it:
 *
 * 1. The panel's script fills WooCommerce's fields with the new state right after an action, and once WooCommerce
 *    has applied the change, with WooCommerce's own values and notes (the route below). Fields the staff member
 *    had already changed are left as they are: their edit is theirs to save.
 * 2. This guard, for whatever the script could not do (another tab, the worker's dunning, no JavaScript): the page
 *    posts, beside each guarded field, the value it was drawn with (shop_sidecar_drawn[field], kept up to date by
 *    the script). On Update, a field whose posted value is still the drawn one, while the subscription's own value
 *    has changed since, is saved with the subscription's own value: the staff member did not change it, so the
 *    newer change stands. A field the staff member did change is saved as they chose.
 */

/**
 * The fields of WooCommerce's boxes that a panel action changes, keyed by the names Subscriptions' save handlers
 * read (WCS_Meta_Box_Subscription_Data::save: order_status; WCS_Meta_Box_Schedule::save: <date type>_timestamp_utc,
 * in GMT seconds), with the values the boxes draw for the subscription as it is.
 *
 * @param WC_Subscription $subscription The subscription.
 * @return array<string,string>
 */
function shop_sidecar_form_fields( $subscription ) {
	$fields = array( 'order_status' => 'wc-' . $subscription->get_status() );
	foreach ( array_keys( wcs_get_subscription_date_types() ) as $date_type ) {
		$key = wcs_normalise_date_type_key( $date_type );
		if ( 'last_order_date_created' === $key ) {
			continue;
		}
		$fields[ $date_type . '_timestamp_utc' ] = (string) $subscription->get_time( $key, 'gmt' );
	}
	return $fields;
}

/** The values the page's WooCommerce fields were drawn with, posted with the form (inside the edit form). */
function shop_sidecar_print_drawn_fields( $subscription ) {
	echo '<div class="shop-sidecar-drawn" hidden>';
	foreach ( shop_sidecar_form_fields( $subscription ) as $field => $value ) {
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
// HPOS storage (and posts, if the above did not run): before Subscriptions' own save handlers (priority 10).
add_action( 'woocommerce_process_shop_order_meta', 'shop_sidecar_keep_changes_since_drawn', 5, 1 );

/**
 * The guard (2. above). It only moves posted values to the ones stored, and runs once per saved subscription.
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
	if ( ! function_exists( 'wcs_is_subscription' ) || ! current_user_can( 'edit_shop_orders' ) || ! wcs_is_subscription( $id ) ) {
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
	$subscription = wcs_get_subscription( $id );
	if ( ! $subscription ) {
		return;
	}
	// The post's own status is never the form's to change: Subscriptions changes it from order_status, with its
	// consequences (scheduled payments, e-mails, notes); written as posted, it would put back a stale status unseen.
	if ( isset( $_POST['post_status'] ) ) {
		$_POST['post_status'] = 'wc-' . $subscription->get_status();
	}
	$drawn = wp_unslash( $_POST['shop_sidecar_drawn'] );
	$kept  = array();
	foreach ( shop_sidecar_form_fields( $subscription ) as $field => $now ) {
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
	if ( $kept && function_exists( 'wcs_add_admin_notice' ) ) {
		wcs_add_admin_notice( __( 'The subscription\'s status or dates had changed since this page was opened. The newer values were kept; your other changes were saved.', 'shop-sidecar-companion' ), 'success' );
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
		register_rest_route(
			'shop-sidecar/v1',
			'/subscriptions/(?P<id>\d+)/edit-screen',
			array(
				'methods'             => 'GET',
				'callback'            => 'shop_sidecar_edit_screen_fields',
				'permission_callback' => static fn() => current_user_can( 'edit_shop_orders' ),
				'args'                => array( 'id' => array( 'validate_callback' => static fn( $value ) => ctype_digit( (string) $value ) ) ),
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
	global $wpdb;
	$subscription = function_exists( 'wcs_get_subscription' ) ? wcs_get_subscription( (int) $request['id'] ) : false;
	if ( ! $subscription ) {
		return new WP_Error( 'shop_sidecar_not_found', 'No such subscription.', array( 'status' => 404 ) );
	}
	$id       = $subscription->get_id();
	$table    = $wpdb->prefix . 'sidecar_woocommerce_changes';
	$suppress = $wpdb->suppress_errors( true ); // The service's table exists only once it has been migrated.
	$waiting  = (int) $wpdb->get_var( $wpdb->prepare( "SELECT COUNT(*) FROM {$table} WHERE object_id = %d AND status IN ('pending', 'applying')", $id ) );
	$wpdb->suppress_errors( $suppress );

	// The status select as WCS_Meta_Box_Subscription_Data draws it: the statuses the subscription can move to.
	$options = array();
	foreach ( wcs_get_subscription_statuses() as $status => $label ) {
		if ( $subscription->can_be_updated_to( $status ) || $subscription->has_status( substr( $status, 3 ) ) ) {
			$options[] = array( 'value' => $status, 'label' => $label );
		}
	}

	// The notes list as WooCommerce's notes box draws it (its own view).
	$notes_html = null;
	$view       = defined( 'WC_ABSPATH' ) ? WC_ABSPATH . 'includes/admin/meta-boxes/views/html-order-notes.php' : '';
	if ( $view && is_file( $view ) ) {
		$notes = wc_get_order_notes( array( 'order_id' => $id ) );
		ob_start();
		include $view;
		$notes_html = (string) ob_get_clean();
	}

	$on_hold = $subscription->has_status( 'on-hold' );
	return array(
		'id'             => $id,
		'waiting'        => $waiting,
		'status'         => $subscription->get_status(),
		'next_payment'   => shop_sidecar_iso_moment( $subscription->get_date( 'next_payment' ) ),
		'pause_end'      => $on_hold ? shop_sidecar_iso_moment( $subscription->get_meta( '_schedule_auto_reactivation' ) ) : null,
		'fields'         => shop_sidecar_form_fields( $subscription ),
		'status_options' => $options,
		'notes_html'     => $notes_html,
	);
}
