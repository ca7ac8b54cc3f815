<?php
/**
 * The driver's commands. Each takes the decoded JSON arguments and returns what is printed as JSON.
 * Everything is done through WordPress', WooCommerce's and Subscriptions' own functions, as a request would.
 */

use Automattic\WooCommerce\Internal\DataStores\Orders\CustomOrdersTableController;
use Automattic\WooCommerce\Internal\DataStores\Orders\DataSynchronizer;
use Automattic\WooCommerce\Internal\Features\FeaturesController;
use Automattic\WooCommerce\Utilities\OrderUtil;

const SIDECAR_SITE_URL    = 'https://shop.example.dk';
const SIDECAR_ADMIN_EMAIL = 'admin@shop.example.dk';
const SIDECAR_PLUGINS     = array( 'woocommerce/woocommerce.php', 'woocommerce-subscriptions/woocommerce-subscriptions.php' );

const SIDECAR_COMMANDS = array(
	'install'         => 'sidecar_cmd_install',
	'install_plugins' => 'sidecar_cmd_install_plugins', // internal: second process of install
	'install_setup'   => 'sidecar_cmd_install_setup',   // internal: third process of install
	'fixture'         => 'sidecar_cmd_fixture',
	'call'            => 'sidecar_cmd_call',
	'run_actions'     => 'sidecar_cmd_run_actions',
	'snapshot'        => 'sidecar_cmd_snapshot',
	'log_reset'       => 'sidecar_cmd_log_reset',
	'log'             => 'sidecar_cmd_log',
	'sql'             => 'sidecar_cmd_sql',
	'storage'         => 'sidecar_cmd_storage',
	'site_url'        => 'sidecar_cmd_site_url',
	'cron_due'        => 'sidecar_cmd_cron_due',
	'user'            => 'sidecar_cmd_user',
	'post'            => 'sidecar_cmd_post',
	'state'           => 'sidecar_cmd_state',
	'run_actions_mail' => 'sidecar_cmd_run_actions_mail',
	'option'          => 'sidecar_cmd_option',
	'provider_plugins' => 'sidecar_cmd_provider_plugins',
	'gateways'        => 'sidecar_cmd_gateways',
	'wallet_plugin_webhook' => 'sidecar_cmd_wallet_plugin_webhook',
	'wallet_plugin_check_charges' => 'sidecar_cmd_wallet_plugin_check_charges',
);

// ---------------------------------------------------------------------------------------------------------------
// install

/**
 * Runs another command of this driver in a fresh PHP process with the same environment and returns its result.
 * Install needs three processes: WordPress' tables must exist before a normal load, and plugins activated in the
 * middle of a request missed that request's plugins_loaded/init, which their setup relies on.
 */
function sidecar_run_child( string $command, array $args = array() ): array {
	$pipes = array();
	$ini   = array();
	foreach ( array( 'opcache.enable_cli', 'opcache.file_cache', 'opcache.file_cache_only' ) as $name ) {
		if ( ini_get( $name ) ) { // the same compiled-file cache as this process (see woocommerce-shop.ts)
			array_push( $ini, '-d', $name . '=' . ini_get( $name ) );
		}
	}
	$proc = proc_open(
		array_merge( array( PHP_BINARY ), $ini, array( dirname( __DIR__ ) . '/driver.php', $command ) ),
		array( 0 => array( 'pipe', 'r' ), 1 => array( 'pipe', 'w' ), 2 => STDERR ),
		$pipes
	);
	if ( ! is_resource( $proc ) ) {
		throw new RuntimeException( "cannot start php for $command" );
	}
	fwrite( $pipes[0], json_encode( (object) $args ) );
	fclose( $pipes[0] );
	$out = stream_get_contents( $pipes[1] );
	fclose( $pipes[1] );
	$code = proc_close( $proc );
	$at   = strrpos( $out, SIDECAR_MARKER );
	if ( 0 !== $code || false === $at ) {
		throw new RuntimeException( "driver.php $command exited with $code (its error is above on stderr)" );
	}
	return json_decode( trim( substr( $out, $at + strlen( SIDECAR_MARKER ) ) ), true, 512, JSON_THROW_ON_ERROR );
}

/** install {mode}: WordPress, then WooCommerce and Subscriptions, store settings and the order storage mode. */
function sidecar_cmd_install( array $args ): array {
	$mode = $args['mode'] ?? 'hpos';
	if ( ! in_array( $mode, array( 'hpos', 'hpos-sync', 'posts' ), true ) ) {
		throw new InvalidArgumentException( "unknown mode '$mode'" );
	}
	$t = microtime( true );
	require_once ABSPATH . 'wp-admin/includes/upgrade.php';
	if ( ! is_blog_installed() ) {
		wp_install( 'Test shop', 'admin', SIDECAR_ADMIN_EMAIL, false, '', 'admin-test-password' );
	}
	update_option( 'siteurl', SIDECAR_SITE_URL );
	update_option( 'home', SIDECAR_SITE_URL );
	update_option( 'timezone_string', 'Europe/Copenhagen' );
	update_option( 'gmt_offset', '' );
	update_option( 'permalink_structure', '/%postname%/' );
	Sidecar_Test_Recorder::ensure_table();
	$timings = array( 'wordpress_ms' => sidecar_ms( $t ) );

	$plugins = sidecar_run_child( 'install_plugins' );
	$timings += array( 'activate_ms' => $plugins['timing']['load_ms'] + $plugins['timing']['command_ms'] );
	$setup = sidecar_run_child( 'install_setup', array( 'mode' => $mode ) );
	$timings += array( 'setup_ms' => $setup['timing']['load_ms'] + $setup['timing']['command_ms'] );
	return array( 'timings' => $timings ) + $setup['result'];
}

/** Activates WooCommerce, then Subscriptions, as the plugins screen does (activation hooks included). */
function sidecar_cmd_install_plugins( array $args ): array {
	require_once ABSPATH . 'wp-admin/includes/plugin.php';
	wp_set_current_user( 1 );
	$activated = array();
	foreach ( SIDECAR_PLUGINS as $plugin ) {
		if ( is_plugin_active( $plugin ) ) {
			continue;
		}
		$result = activate_plugin( $plugin );
		if ( is_wp_error( $result ) ) {
			throw new RuntimeException( "activating $plugin: " . $result->get_error_message() );
		}
		$activated[] = $plugin;
	}
	return array( 'activated' => $activated );
}

/**
 * Runs as the administrator's first page load (see driver.php): Subscriptions' upgrader has already run (on
 * wp_loaded), which records the site URL so the shop is not taken for a staging copy. Then the store settings
 * and the storage mode.
 */
function sidecar_cmd_install_setup( array $args ): array {
	$t = microtime( true );
	if ( ! class_exists( 'WC_Subscriptions' ) || ! function_exists( 'WC' ) ) {
		throw new RuntimeException( 'WooCommerce or Subscriptions did not load after activation' );
	}
	// What WooCommerce does on the first admin page after install (woocommerce_newly_installed: on WooCommerce 10
	// that turns HPOS on for a new shop; the mode is set explicitly below anyway).
	if ( method_exists( 'WC_Install', 'newly_installed' ) ) {
		WC_Install::newly_installed();
	}
	if ( WCS_Staging::is_duplicate_site() ) {
		// Only if the upgrader did not run (it should have): the same call it makes on a first install.
		WCS_Staging::set_duplicate_site_url_lock();
	}

	// Store settings of a Danish shop: DKK, prices entered with 25% VAT, stock managed.
	$options = array(
		'woocommerce_currency'              => 'DKK',
		'woocommerce_default_country'       => 'DK',
		'woocommerce_store_address'         => 'Butiksvej 1',
		'woocommerce_store_city'            => 'København',
		'woocommerce_store_postcode'        => '1000',
		'woocommerce_price_thousand_sep'    => '.',
		'woocommerce_price_decimal_sep'     => ',',
		'woocommerce_price_num_decimals'    => '2',
		'woocommerce_calc_taxes'            => 'yes',
		'woocommerce_prices_include_tax'    => 'yes',
		'woocommerce_tax_display_shop'      => 'incl',
		'woocommerce_tax_display_cart'      => 'incl',
		'woocommerce_manage_stock'          => 'yes',
		'woocommerce_email_from_address'    => SIDECAR_ADMIN_EMAIL,
		'woocommerce_email_from_name'       => 'Test shop',
		'woocommerce_coming_soon'           => 'no',
		'woocommerce_allowed_countries'     => 'all',
	);
	foreach ( $options as $name => $value ) {
		update_option( $name, $value );
	}
	global $wpdb;
	$has_rate = (int) $wpdb->get_var( "SELECT COUNT(*) FROM {$wpdb->prefix}woocommerce_tax_rates WHERE tax_rate_country = 'DK' AND tax_rate_class = ''" );
	if ( 0 === $has_rate ) {
		WC_Tax::_insert_tax_rate(
			array(
				'tax_rate_country'  => 'DK',
				'tax_rate_state'    => '',
				'tax_rate'          => '25.0000',
				'tax_rate_name'     => 'Moms',
				'tax_rate_priority' => 1,
				'tax_rate_compound' => 0,
				'tax_rate_shipping' => 1,
				'tax_rate_order'    => 0,
				'tax_rate_class'    => '',
			)
		);
	}
	// The fixture's downloadable file lives on the site; WooCommerce only serves files from approved folders.
	$register = 'Automattic\WooCommerce\Internal\ProductDownloads\ApprovedDirectories\Register';
	if ( class_exists( $register ) ) {
		$directories = wc_get_container()->get( $register );
		if ( ! $directories->approved_directory_exists( SIDECAR_SITE_URL . '/' ) ) {
			$directories->add_approved_directory( SIDECAR_SITE_URL . '/' );
		}
	}
	$settings_ms = sidecar_ms( $t );

	$t       = microtime( true );
	$storage = sidecar_set_storage( $args['mode'] ?? 'hpos' );
	$storage_ms = sidecar_ms( $t );

	// Work WooCommerce queued while installing (e.g. its own updates, Analytics set-up), so a test's own
	// run_actions only runs what the test caused.
	$t       = microtime( true );
	$actions = sidecar_cmd_run_actions( array() );

	$emails = array();
	foreach ( WC()->mailer()->get_emails() as $email ) {
		$emails[ $email->id ] = $email->is_enabled();
	}
	ksort( $emails );
	return array(
		'versions'          => array(
			'wordpress'     => get_bloginfo( 'version' ),
			'woocommerce'   => WC()->version,
			'subscriptions' => WC_Subscriptions::$version,
			'php'           => PHP_VERSION,
		),
		'storage'           => $storage,
		'is_duplicate_site' => WCS_Staging::is_duplicate_site(),
		'emails_enabled'    => $emails,
		'install_actions'   => $actions,
		'setup_timings'     => array( 'settings_ms' => $settings_ms, 'storage_ms' => $storage_ms, 'actions_ms' => sidecar_ms( $t ) ),
	);
}

/**
 * Switches order storage with WooCommerce's own code: the custom_order_tables feature through the
 * FeaturesController (its handler creates the HPOS tables), the DataSynchronizer's batches until nothing is
 * pending, then the authoritative-table and sync options. On WooCommerce 10 the feature's option *is*
 * woocommerce_custom_orders_table_enabled; on 7.9 it is woocommerce_feature_custom_order_tables_enabled and
 * HPOS is used only while both it and woocommerce_custom_orders_table_enabled are on.
 */
function sidecar_set_storage( string $mode ): array {
	$container = wc_get_container();
	$features  = $container->get( FeaturesController::class );
	$sync      = $container->get( DataSynchronizer::class );
	$hpos      = 'posts' !== $mode;

	if ( $hpos ) {
		$features->change_feature_enable( 'custom_order_tables', true );
		if ( ! $sync->check_orders_table_exists() ) {
			$sync->create_database_tables();
		}
		sidecar_sync_orders( $sync );
		update_option( DataSynchronizer::ORDERS_DATA_SYNC_ENABLED_OPTION, 'hpos-sync' === $mode ? 'yes' : 'no' );
		update_option( CustomOrdersTableController::CUSTOM_ORDERS_TABLE_USAGE_ENABLED_OPTION, 'yes' );
	} else {
		if ( $sync->check_orders_table_exists() ) {
			sidecar_sync_orders( $sync ); // orders written to HPOS so far go back to posts first
		}
		update_option( CustomOrdersTableController::CUSTOM_ORDERS_TABLE_USAGE_ENABLED_OPTION, 'no' );
		update_option( DataSynchronizer::ORDERS_DATA_SYNC_ENABLED_OPTION, 'no' );
		$features->change_feature_enable( 'custom_order_tables', false );
	}
	return sidecar_storage_state();
}

function sidecar_sync_orders( DataSynchronizer $sync ): void {
	for ( $round = 0; $round < 100 && $sync->get_total_pending_count() > 0; $round++ ) {
		$sync->process_batch( $sync->get_next_batch_to_process( $sync->get_default_batch_size() ) );
	}
	if ( $sync->get_total_pending_count() > 0 ) {
		throw new RuntimeException( 'orders still pending synchronisation after 100 batches' );
	}
}

/** The storage as WooCommerce sees it, with the options it reads. */
function sidecar_storage_state(): array {
	$names = array(
		'woocommerce_custom_orders_table_enabled',
		'woocommerce_custom_orders_table_data_sync_enabled',
		'woocommerce_feature_custom_order_tables_enabled',
		'woocommerce_custom_orders_table_created',
	);
	$options = array();
	foreach ( $names as $name ) {
		$options[ $name ] = get_option( $name, null );
	}
	return array(
		'hpos_authoritative' => OrderUtil::custom_orders_table_usage_is_enabled(),
		'sync_enabled'       => wc_get_container()->get( DataSynchronizer::class )->data_sync_is_enabled(),
		'options'            => $options,
	);
}

/** storage {mode?}: the storage state; with mode, switches to it first (e.g. to test a switch). */
function sidecar_cmd_storage( array $args ): array {
	return isset( $args['mode'] ) ? sidecar_set_storage( $args['mode'] ) : sidecar_storage_state();
}

/**
 * site_url {url}: moves the site to another address (siteurl and home), e.g. while a test serves it over HTTP, and
 * tells Subscriptions it is still the live site (the lock the install set, for the new address), so it is not
 * taken for a staging copy. Returns the address it had.
 */
function sidecar_cmd_site_url( array $args ): array {
	$url = untrailingslashit( (string) ( $args['url'] ?? '' ) );
	if ( ! preg_match( '#^https?://#', $url ) ) {
		throw new InvalidArgumentException( 'site_url needs an http(s) url' );
	}
	$previous = get_option( 'siteurl' );
	update_option( 'siteurl', $url );
	update_option( 'home', $url );
	WCS_Staging::set_duplicate_site_url_lock();
	return array( 'previous' => $previous, 'url' => get_option( 'siteurl' ), 'is_duplicate_site' => WCS_Staging::is_duplicate_site() );
}

/**
 * cron_due {hook}: WP-Cron's next event of the hook falls due now (same recurrence and arguments), so the next
 * request to a served shop spawns WP-Cron for it, as it would once its time came. E.g. action_scheduler_run_queue,
 * which runs Action Scheduler once a minute. WP-Cron's lock is released too: a spawned run whose loopback request
 * never arrived (WordPress gives it 0.01 s) otherwise holds it for a minute.
 */
function sidecar_cmd_cron_due( array $args ): array {
	$hook  = (string) ( $args['hook'] ?? '' );
	$moved = array();
	delete_transient( 'doing_cron' );
	foreach ( _get_cron_array() as $timestamp => $hooks ) {
		foreach ( $hooks[ $hook ] ?? array() as $event ) {
			wp_unschedule_event( $timestamp, $hook, $event['args'] );
			if ( $event['schedule'] ) {
				wp_schedule_event( time() - 1, $event['schedule'], $hook, $event['args'] );
			} else {
				wp_schedule_single_event( time() - 1, $hook, $event['args'] );
			}
			$moved[] = array( 'was' => (int) $timestamp, 'args' => $event['args'] );
		}
	}
	return array( 'hook' => $hook, 'moved' => $moved, 'next' => wp_next_scheduled( $hook, $moved ? $moved[0]['args'] : array() ) );
}

function sidecar_ms( float $since ): int {
	return (int) round( ( microtime( true ) - $since ) * 1000 );
}

// ---------------------------------------------------------------------------------------------------------------
// fixture

/** The customer and products every fixture uses, made once per shop and remembered in an option. */
function sidecar_base_fixture(): array {
	$ids = get_option( 'sidecar_test_fixture_ids' );
	if ( is_array( $ids ) && wc_get_product( $ids['physical_product_id'] ) && get_user_by( 'id', $ids['customer_id'] ) ) {
		return $ids;
	}

	$customer = new WC_Customer();
	$customer->set_username( 'kunde' );
	$customer->set_email( 'kunde@example.dk' );
	$customer->set_password( 'kunde-test-password' );
	$customer->set_first_name( 'Karen' );
	$customer->set_last_name( 'Kunde' );
	foreach ( sidecar_address() as $field => $value ) {
		$customer->{"set_billing_$field"}( $value );
		if ( ! in_array( $field, array( 'email' ), true ) ) {
			$customer->{"set_shipping_$field"}( $value );
		}
	}
	$customer->save();

	$physical = new WC_Product_Simple();
	$physical->set_name( 'Kaffebønner 1 kg' );
	$physical->set_sku( 'COFFEE-1KG' );
	$physical->set_regular_price( '200' );
	$physical->set_manage_stock( true );
	$physical->set_stock_quantity( 100 );
	$physical->save();

	$download = new WC_Product_Simple();
	$download->set_name( 'Brygguide (PDF)' );
	$download->set_sku( 'GUIDE-PDF' );
	$download->set_regular_price( '50' );
	$download->set_virtual( true );
	$download->set_downloadable( true );
	$file = new WC_Product_Download();
	$file->set_id( 'brygguide-pdf' );
	$file->set_name( 'Brygguide' );
	$file->set_file( SIDECAR_SITE_URL . '/wp-content/uploads/woocommerce_uploads/brygguide.pdf' );
	$download->set_downloads( array( $file ) );
	$download->save();

	$subscription_product = new WC_Product_Subscription();
	$subscription_product->set_name( 'Kaffeabonnement' );
	$subscription_product->set_sku( 'COFFEE-SUB' );
	$subscription_product->set_regular_price( '149' );
	foreach ( array( '_subscription_price' => '149', '_subscription_period' => 'month', '_subscription_period_interval' => '1', '_subscription_length' => '0', '_subscription_trial_length' => '0', '_subscription_sign_up_fee' => '' ) as $key => $value ) {
		$subscription_product->update_meta_data( $key, $value );
	}
	$subscription_product->save();

	$ids = array(
		'customer_id'             => $customer->get_id(),
		'physical_product_id'     => $physical->get_id(),
		'download_product_id'     => $download->get_id(),
		'subscription_product_id' => $subscription_product->get_id(),
	);
	update_option( 'sidecar_test_fixture_ids', $ids, false );
	return $ids;
}

function sidecar_address(): array {
	return array(
		'first_name' => 'Karen',
		'last_name'  => 'Kunde',
		'address_1'  => 'Kundevej 2',
		'city'       => 'Aarhus C',
		'postcode'   => '8000',
		'country'    => 'DK',
		'email'      => 'kunde@example.dk',
		'phone'      => '+4512345678',
	);
}

function sidecar_gateway( string $id ): WC_Payment_Gateway {
	$gateways = WC()->payment_gateways()->payment_gateways();
	if ( ! isset( $gateways[ $id ] ) ) {
		throw new InvalidArgumentException( "unknown gateway '$id'" );
	}
	return $gateways[ $id ];
}

/** An order for the customer with the given products, addresses, gateway and totals, not yet saved. */
function sidecar_new_order( array $base, array $product_ids, string $gateway ): WC_Order {
	$order = wc_create_order( array( 'customer_id' => $base['customer_id'], 'created_via' => 'checkout' ) );
	foreach ( $product_ids as $product_id ) {
		$order->add_product( wc_get_product( $product_id ), 1 );
	}
	$address = sidecar_address();
	$order->set_address( $address, 'billing' );
	unset( $address['email'] );
	$order->set_address( $address, 'shipping' );
	$order->set_payment_method( sidecar_gateway( $gateway ) );
	$order->calculate_totals();
	return $order;
}

function sidecar_apply_meta( WC_Abstract_Order $object, array $meta ): void {
	foreach ( $meta as $key => $value ) {
		$object->update_meta_data( (string) $key, $value );
	}
}

/**
 * fixture {kind, gateway, meta?, subscription_meta?, status?}
 * order: a pending order of the physical and the downloadable product (status: another status to move it to).
 * subscription: a monthly subscription, paid and activated through its parent order as at checkout, then its
 * renewal as Subscriptions makes it when the next payment falls due (see sidecar_due_renewal()): the
 * subscription on hold, the renewal order pending with the gateway set, the gateway asked to charge (the test
 * gateway does nothing). meta goes on the renewal order, subscription_meta on the subscription; status, when
 * given, is then set on the subscription.
 */
function sidecar_cmd_fixture( array $args ): array {
	$base    = sidecar_base_fixture();
	$gateway = $args['gateway'] ?? 'reepay_checkout';
	$kind    = $args['kind'] ?? 'order';

	if ( 'order' === $kind ) {
		$order = sidecar_new_order( $base, array( $base['physical_product_id'], $base['download_product_id'] ), $gateway );
		sidecar_apply_meta( $order, $args['meta'] ?? array() );
		$order->save();
		if ( isset( $args['status'] ) && 'pending' !== $args['status'] ) {
			$order->update_status( $args['status'] );
		}
		return $base + array( 'order_id' => $order->get_id() );
	}
	if ( 'subscription' !== $kind ) {
		throw new InvalidArgumentException( "unknown fixture kind '$kind'" );
	}

	$parent = sidecar_new_order( $base, array( $base['subscription_product_id'] ), $gateway );
	$parent->save();

	$start        = gmdate( 'Y-m-d H:i:s' );
	$subscription = wcs_create_subscription(
		array(
			'order_id'         => $parent->get_id(),
			'customer_id'      => $base['customer_id'],
			'status'           => 'pending',
			'billing_period'   => 'month',
			'billing_interval' => 1,
			'start_date'       => $start,
			'created_via'      => 'checkout',
		)
	);
	if ( is_wp_error( $subscription ) ) {
		throw new RuntimeException( 'wcs_create_subscription: ' . $subscription->get_error_message() );
	}
	$subscription->add_product( wc_get_product( $base['subscription_product_id'] ), 1 );
	$address = sidecar_address();
	$subscription->set_address( $address, 'billing' );
	unset( $address['email'] );
	$subscription->set_address( $address, 'shipping' );
	$subscription->set_payment_method( sidecar_gateway( $gateway ) );
	$subscription->set_requires_manual_renewal( false );
	$subscription->calculate_totals();
	$subscription->update_dates( array( 'next_payment' => gmdate( 'Y-m-d H:i:s', strtotime( '+1 month', strtotime( $start ) ) ) ) );
	$subscription->save();

	// Paying the parent order activates the subscription (and schedules its next payment), as at checkout.
	$parent->payment_complete( 'fixture-parent-' . $parent->get_id() );

	$renewal = sidecar_due_renewal( $subscription->get_id() );
	sidecar_apply_meta( $renewal, $args['meta'] ?? array() );
	$renewal->save();
	$subscription = wcs_get_subscription( $subscription->get_id() );
	sidecar_apply_meta( $subscription, $args['subscription_meta'] ?? array() );
	$subscription->save();
	if ( isset( $args['status'] ) && ! $subscription->has_status( $args['status'] ) ) {
		$subscription->update_status( $args['status'] );
	}

	return $base + array(
		'order_id'         => $parent->get_id(),
		'subscription_id'  => $subscription->get_id(),
		'renewal_order_id' => $renewal->get_id(),
	);
}

/**
 * Runs the subscription's pending woocommerce_scheduled_subscription_payment action through Action Scheduler,
 * as when the next payment falls due (here ahead of its date). Subscriptions then puts the subscription on hold,
 * makes the renewal with wcs_create_renewal_order(), sets the subscription's gateway on it (which
 * wcs_create_renewal_order() alone does not: a renewal without it makes Subscriptions switch the subscription to
 * an empty payment method once it is paid) and fires woocommerce_scheduled_subscription_payment_{gateway}.
 */
function sidecar_due_renewal( int $subscription_id ): WC_Order {
	$action_id = ActionScheduler::store()->find_action(
		'woocommerce_scheduled_subscription_payment',
		array( 'args' => array( 'subscription_id' => $subscription_id ), 'status' => ActionScheduler_Store::STATUS_PENDING )
	);
	if ( ! $action_id ) {
		throw new RuntimeException( "subscription $subscription_id has no scheduled payment" );
	}
	ActionScheduler::runner()->process_action( $action_id, 'sidecar-fixture' );
	$renewal = wcs_get_subscription( $subscription_id )->get_last_order( 'all', 'renewal' );
	if ( ! $renewal instanceof WC_Order ) {
		throw new RuntimeException( "Subscriptions made no renewal order for subscription $subscription_id" );
	}
	return $renewal;
}

// ---------------------------------------------------------------------------------------------------------------
// call: one WooCommerce/Subscriptions call, as a twin of what the service does. One small function per op.

function sidecar_order( int $id ): WC_Order {
	$order = wc_get_order( $id );
	if ( ! $order instanceof WC_Order ) {
		throw new InvalidArgumentException( "no order $id" );
	}
	return $order;
}

function sidecar_subscription( int $id ): WC_Subscription {
	$subscription = wcs_get_subscription( $id );
	if ( ! $subscription ) {
		throw new InvalidArgumentException( "no subscription $id" );
	}
	return $subscription;
}

/**
 * A renewal order's subscription (or the subscription itself) and the order the payment was for: the renewal,
 * or for a subscription id its last order.
 */
function sidecar_subscription_and_order( int $id ): array {
	if ( wcs_is_subscription( $id ) ) {
		$subscription = sidecar_subscription( $id );
		return array( $subscription, $subscription->get_last_order( 'all', 'any' ) );
	}
	$order         = sidecar_order( $id );
	$subscriptions = wcs_get_subscriptions_for_renewal_order( $order );
	if ( ! $subscriptions ) {
		throw new InvalidArgumentException( "order $id is not a renewal order" );
	}
	return array( reset( $subscriptions ), $order );
}

const SIDECAR_OPS = array(
	'order_update_status'           => 'sidecar_op_order_update_status',
	'order_payment_complete'        => 'sidecar_op_order_payment_complete',
	'order_add_note'                => 'sidecar_op_order_add_note',
	'order_update_meta'             => 'sidecar_op_order_update_meta',
	'order_refund'                  => 'sidecar_op_order_refund',
	'subscription_due_renewal'      => 'sidecar_op_subscription_due_renewal',
	'subscription_create_renewal'   => 'sidecar_op_subscription_create_renewal',
	'card_plugin_save_card'         => 'sidecar_op_card_plugin_save_card',
	'subscription_update_status'    => 'sidecar_op_subscription_update_status',
	'subscription_payment_failed'   => 'sidecar_op_subscription_payment_failed',
	'subscription_payment_complete' => 'sidecar_op_subscription_payment_complete',
	'subscription_update_dates'     => 'sidecar_op_subscription_update_dates',
	'subscription_add_note'         => 'sidecar_op_subscription_add_note',
	// Twins of the service's own hand-overs, made as a gateway plugin or a shop manager makes them.
	'order_authorized'              => 'sidecar_op_order_authorized',
	'subscription_pause'            => 'sidecar_op_subscription_pause',
	'subscription_activate'         => 'sidecar_op_subscription_activate',
	'subscription_set_payment_method' => 'sidecar_op_subscription_set_payment_method',
	'order_calculate_totals'        => 'sidecar_op_order_calculate_totals',
	'subscription_payment_method_needed' => 'sidecar_op_subscription_payment_method_needed',
	'order_trash'                   => 'sidecar_op_order_trash',
);

/**
 * Staff move an order to the bin from WP admin: in posts storage the order screen's "Move to Trash" (post.php,
 * wp_trash_post()), in HPOS WooCommerce's orders list and screen ($order->delete( false )). The order's status after.
 */
function sidecar_op_order_trash( int $id, array $a ) {
	$order = sidecar_order( $id );
	if ( OrderUtil::custom_orders_table_usage_is_enabled() ) {
		$order->delete( false );
	} elseif ( ! wp_trash_post( $id ) ) {
		throw new RuntimeException( "wp_trash_post( $id ) did not trash the order" );
	}
	return wc_get_order( $id ) ? wc_get_order( $id )->get_status() : null;
}

/**
 * The companion's "Payment method needed" e-mail (its WC_Email) sent for the subscription as the dunning engine has
 * it sent (kind, order_id, reason, deadline ...): WooCommerce e-mails the customer and notes it on the subscription.
 */
function sidecar_op_subscription_payment_method_needed( int $id, array $a ) {
	if ( ! function_exists( 'shop_sidecar_payment_method_needed' ) ) {
		throw new RuntimeException( 'the companion is not installed in this shop' );
	}
	return shop_sidecar_payment_method_needed( $id, $a );
}

/** The customer switches how the subscription is paid (as the change-payment-method flow leaves it). */
function sidecar_op_subscription_set_payment_method( int $id, array $a ) {
	$subscription = sidecar_subscription( $id );
	$subscription->set_payment_method( WC()->payment_gateways()->payment_gateways()[ $a['gateway'] ] ?? $a['gateway'] );
	$subscription->save();
	return $subscription->get_payment_method();
}

/** WooCommerce's own calculate_totals() on an order, as WP admin's "Recalculate" does; the totals after it. */
function sidecar_op_order_calculate_totals( int $id, array $a ) {
	$order = sidecar_order( $id );
	$order->calculate_totals();
	$fees = array();
	foreach ( $order->get_fees() as $fee ) {
		$fees[] = array( 'name' => $fee->get_name(), 'total' => $fee->get_total(), 'total_tax' => $fee->get_total_tax() );
	}
	return array( 'total' => $order->get_total(), 'total_tax' => $order->get_total_tax(), 'fees' => $fees );
}

/** Money reserved, not yet taken: the transaction noted and the order put on hold. */
function sidecar_op_order_authorized( int $id, array $a ) {
	$order = sidecar_order( $id );
	$order->set_transaction_id( $a['transaction_id'] );
	return $order->update_status( 'on-hold', $a['note'] );
}

/** Runs $work as the given user (0: nobody), as a change made in WP admin by that user. */
function sidecar_as_user( int $user_id, callable $work ) {
	$previous = get_current_user_id();
	wp_set_current_user( $user_id );
	try {
		return $work();
	} finally {
		wp_set_current_user( $previous );
	}
}

/**
 * A shop manager's pause: on hold with a note in their name, the next payment moved, the pause end kept. Saved
 * once, as Subscriptions' own update_status('on-hold') saves: the pause end goes with that save and update_dates()
 * writes the dates itself, so woocommerce_update_order and woocommerce_update_subscription fire once.
 */
function sidecar_op_subscription_pause( int $id, array $a ) {
	return sidecar_as_user(
		(int) ( $a['user_id'] ?? 0 ),
		static function () use ( $id, $a ) {
			$subscription = sidecar_subscription( $id );
			$subscription->update_meta_data( '_schedule_auto_reactivation', $a['auto_reactivation'] );
			// update_status() drops the note of a status that does not change (a renewal due puts it on hold).
			if ( $subscription->has_status( 'on-hold' ) ) {
				$subscription->add_order_note( $a['note'], 0, true );
				$subscription->save();
			} else {
				$subscription->update_status( 'on-hold', $a['note'], true );
			}
			$subscription->update_dates( array( 'next_payment' => $a['next_payment'] ) );
			return $subscription->get_status();
		}
	);
}

/** Back to active, the pause end cleared; by a user when user_id is given. */
function sidecar_op_subscription_activate( int $id, array $a ) {
	$user_id = (int) ( $a['user_id'] ?? 0 );
	return sidecar_as_user(
		$user_id,
		static function () use ( $id, $a, $user_id ) {
			$subscription = sidecar_subscription( $id );
			$subscription->delete_meta_data( '_schedule_auto_reactivation' );
			$subscription->update_status( 'active', $a['note'], $user_id > 0 );
			return $subscription->get_status();
		}
	);
}

/**
 * call {op, id, args?}. args.user_id makes the call as that WordPress user (as a shop manager in the admin:
 * notes then name the user); without it the call is made as nobody, as by a webhook or Action Scheduler.
 */
function sidecar_cmd_call( array $args ): array {
	$op = $args['op'] ?? '';
	if ( ! isset( SIDECAR_OPS[ $op ] ) ) {
		throw new InvalidArgumentException( "unknown op '$op'; known: " . implode( ', ', array_keys( SIDECAR_OPS ) ) );
	}
	$op_args = $args['args'] ?? array();
	if ( ! empty( $op_args['user_id'] ) ) {
		wp_set_current_user( (int) $op_args['user_id'] );
	}
	$result = ( SIDECAR_OPS[ $op ] )( (int) ( $args['id'] ?? 0 ), $op_args );
	return array( 'op' => $op, 'id' => (int) $args['id'], 'result' => $result );
}

function sidecar_op_order_update_status( int $id, array $a ) {
	return sidecar_order( $id )->update_status( $a['status'], $a['note'] ?? '', (bool) ( $a['manual'] ?? false ) );
}

/** paid_at (unix seconds, optional): when the gateway took the money, as a gateway plugin sets it before payment_complete(). */
function sidecar_op_order_payment_complete( int $id, array $a ) {
	$order = sidecar_order( $id );
	// The metas a gateway plugin keeps of the payment (its handle or charge), set before payment_complete() saves.
	foreach ( (array) ( $a['meta']['set'] ?? array() ) as $key => $value ) {
		$order->update_meta_data( (string) $key, (string) $value );
	}
	foreach ( (array) ( $a['meta']['delete'] ?? array() ) as $key ) {
		$order->delete_meta_data( (string) $key );
	}
	if ( ! empty( $a['paid_at'] ) && ! $order->get_date_paid( 'edit' ) ) {
		$order->set_date_paid( (int) $a['paid_at'] );
	}
	return $order->payment_complete( $a['transaction_id'] ?? '' );
}

function sidecar_op_order_add_note( int $id, array $a ) {
	return sidecar_order( $id )->add_order_note( $a['note'], (int) ( $a['is_customer_note'] ?? 0 ), (bool) ( $a['added_by_user'] ?? false ) );
}

function sidecar_op_order_update_meta( int $id, array $a ) {
	$order = sidecar_order( $id );
	$order->update_meta_data( $a['key'], $a['value'] );
	if ( $a['save'] ?? true ) {
		$order->save();
	}
	return true;
}

/** A refund record only (the gateway is not asked to pay anything back), as "Refund manually" in the admin. */
function sidecar_op_order_refund( int $id, array $a ) {
	$refund = wc_create_refund(
		array(
			'order_id'       => $id,
			'amount'         => $a['amount'],
			'reason'         => $a['reason'] ?? '',
			// true: the gateway's own refund, as the order screen's "Refund ... via <gateway>" button asks for it.
			'refund_payment' => (bool) ( $a['refund_payment'] ?? false ),
			'restock_items'  => (bool) ( $a['restock_items'] ?? false ),
		)
	);
	if ( is_wp_error( $refund ) && ! empty( $a['refund_payment'] ) ) {
		return array( 'error' => $refund->get_error_message() );
	}
	if ( is_wp_error( $refund ) ) {
		throw new RuntimeException( 'wc_create_refund: ' . $refund->get_error_message() );
	}
	return array( 'refund_id' => $refund->get_id() );
}

/** The subscription's next payment falls due now (see sidecar_due_renewal): its gateway is asked to charge it. */
function sidecar_op_subscription_due_renewal( int $id, array $a ) {
	return array( 'renewal_order_id' => sidecar_due_renewal( $id )->get_id() );
}

/**
 * Staff's "Create pending renewal order" action on the subscription screen, as Subscriptions' admin code does it
 * (WCS_Admin_Meta_Boxes::create_pending_renewal_action_request(), whose notices need WP admin): the subscription on
 * hold, a renewal order made pending, the subscription's payment method set on it; nobody asked to charge it yet.
 * The new renewal order's ID.
 */
function sidecar_op_subscription_create_renewal( int $id, array $a ) {
	$subscription = sidecar_subscription( $id );
	$subscription->add_order_note( __( 'Create pending renewal order requested by admin action.', 'woocommerce-subscriptions' ), false, true );
	$subscription->update_status( 'on-hold' );
	$renewal = wcs_create_renewal_order( $subscription );
	if ( is_wp_error( $renewal ) ) {
		throw new RuntimeException( 'wcs_create_renewal_order: ' . $renewal->get_error_message() );
	}
	$renewal->set_payment_method( wc_get_payment_gateway_by_order( $subscription ) );
	$renewal->save();
	return array( 'renewal_order_id' => $renewal->get_id() );
}

/**
 * The card plugin's saved card of a customer, as its checkout keeps it (provider-plugins.ts): the customer's
 * handle at the gateway in the user meta the plugin reads, the card read from the gateway into a WooCommerce payment
 * token by the plugin's own ReepayTokens, and that token assigned to the subscription by the same code.
 * Args: customer (the gateway's customer handle), token (the card's id at the gateway).
 */
function sidecar_op_card_plugin_save_card( int $id, array $a ) {
	$subscription = sidecar_subscription( $id );
	update_user_meta( $subscription->get_customer_id(), 'reepay_customer_id', (string) $a['customer'] );
	$saved = \Reepay\Checkout\Tokens\ReepayTokens::add_payment_token_to_customer( $subscription->get_customer_id(), (string) $a['token'] );
	if ( ! $saved['token'] instanceof WC_Payment_Token ) {
		throw new RuntimeException( 'the card plugin made no payment token' );
	}
	if ( ! $saved['token']->get_id() ) {
		$saved['token']->save();
	}
	\Reepay\Checkout\Tokens\ReepayTokens::assign_payment_token( $subscription, $saved['token'] );
	return array( 'token_id' => $saved['token']->get_id() );
}

function sidecar_op_subscription_update_status( int $id, array $a ) {
	sidecar_subscription( $id )->update_status( $a['status'], $a['note'] ?? '', (bool) ( $a['manual'] ?? false ) );
	return true;
}

/** Subscriptions' own handling of a failed payment for the renewal (7.9: payment_failed_for_related_order). */
function sidecar_op_subscription_payment_failed( int $id, array $a ) {
	list( $subscription, $order ) = sidecar_subscription_and_order( $id );
	$status                       = $a['status'] ?? 'on-hold';
	if ( method_exists( $subscription, 'payment_failed_for_related_order' ) ) {
		$subscription->payment_failed_for_related_order( $status, $order );
	} else {
		$subscription->payment_failed( $status );
	}
	return array( 'subscription_id' => $subscription->get_id(), 'order_id' => $order ? $order->get_id() : null );
}

/** Subscriptions' own handling of a paid renewal: completes the subscription's last order and reactivates. */
function sidecar_op_subscription_payment_complete( int $id, array $a ) {
	list( $subscription, $order ) = sidecar_subscription_and_order( $id );
	$subscription->payment_complete( $a['transaction_id'] ?? '' );
	return array( 'subscription_id' => $subscription->get_id(), 'order_id' => $order ? $order->get_id() : null );
}

/** dates: {next_payment: 'Y-m-d H:i:s' (UTC) | 0, ...}; 0 or '' deletes a date. */
function sidecar_op_subscription_update_dates( int $id, array $a ) {
	$subscription = sidecar_subscription( $id );
	$subscription->update_dates( $a['dates'] ?? array() );
	$subscription->save();
	return true;
}

function sidecar_op_subscription_add_note( int $id, array $a ) {
	return sidecar_subscription( $id )->add_order_note( $a['note'], (int) ( $a['is_customer_note'] ?? 0 ), (bool) ( $a['added_by_user'] ?? false ) );
}

// ---------------------------------------------------------------------------------------------------------------
// Action Scheduler, recorder log, SQL

/**
 * run_actions {horizon_seconds?}: runs pending actions due now or within the horizon (default 10 s: WooCommerce
 * schedules the Analytics import 5 s ahead), through Action Scheduler's own runner, repeatedly until none is left.
 */
function sidecar_cmd_run_actions( array $args ): array {
	$horizon  = (int) ( $args['horizon_seconds'] ?? 10 );
	$store    = ActionScheduler::store();
	$runner   = ActionScheduler::runner();
	$ran      = array();
	$failures = array();
	$on_fail  = static function ( $action_id, $e ) use ( &$failures, $store ) {
		$failures[] = array( 'action_id' => (int) $action_id, 'hook' => $store->fetch_action( $action_id )->get_hook(), 'message' => $e instanceof Throwable ? $e->getMessage() : (string) $e );
	};
	add_action( 'action_scheduler_failed_execution', $on_fail, 10, 2 );
	for ( $round = 0; $round < 20; $round++ ) {
		$ids = $store->query_actions(
			array(
				'status'       => ActionScheduler_Store::STATUS_PENDING,
				'date'         => as_get_datetime_object( time() + $horizon ),
				'date_compare' => '<=',
				'per_page'     => 200,
				'orderby'      => 'date',
				'order'        => 'ASC',
			)
		);
		if ( ! $ids ) {
			break;
		}
		foreach ( $ids as $action_id ) {
			$hook = $store->fetch_action( $action_id )->get_hook();
			$runner->process_action( $action_id, 'sidecar-test' );
			$ran[ $hook ] = ( $ran[ $hook ] ?? 0 ) + 1;
		}
	}
	remove_action( 'action_scheduler_failed_execution', $on_fail, 10 );
	ksort( $ran );
	return array( 'ran' => array_sum( $ran ), 'hooks' => (object) $ran, 'failures' => $failures, 'rounds' => $round );
}

/**
 * run_actions_mail {horizon_seconds?}: run_actions, and each e-mail WordPress would send meanwhile in full (to,
 * subject, message, headers), read just before the recorder stops it.
 */
function sidecar_cmd_run_actions_mail( array $args ): array {
	$mails   = array();
	$collect = static function ( $short_circuit, $atts ) use ( &$mails ) {
		$mails[] = array( 'to' => (array) $atts['to'], 'subject' => (string) $atts['subject'], 'message' => (string) $atts['message'], 'headers' => $atts['headers'] );
		return $short_circuit;
	};
	add_filter( 'pre_wp_mail', $collect, 10, 2 );
	try {
		return sidecar_cmd_run_actions( $args ) + array( 'mails' => $mails );
	} finally {
		remove_filter( 'pre_wp_mail', $collect, 10 );
	}
}

/**
 * option {name, value?}: sets a WordPress option as its settings screen saves it, through sanitize_option (e.g. WPLANG,
 * the site's language, taken only when installed; or an e-mail's woocommerce_<id>_settings); value null deletes it.
 * Returns the value it had and the one it has now.
 */
/**
 * The providers' own plugins (linked by bootstrap.php when SIDECAR_PROVIDER_PLUGINS is 1) activated as the plugins
 * screen does, in their test modes with the fakes' test credentials, their API calls sent to the fakes
 * (mu-plugins/sidecar-test-provider-hosts.php reads sidecar_provider_fakes).
 * Args: card {url, private_key}, wallet {url, client_id, secret_key, subscription_key, merchant_serial_number}.
 */
function sidecar_cmd_provider_plugins( array $args ): array {
	require_once ABSPATH . 'wp-admin/includes/plugin.php';
	wp_set_current_user( 1 );
	update_option( 'sidecar_provider_fakes', array( 'card' => $args['card']['url'], 'wallet' => $args['wallet']['url'] ) );
	update_option(
		'woocommerce_reepay_checkout_settings',
		array(
			'enabled'             => 'yes',
			'test_mode'           => 'yes',
			'private_key_test'    => $args['card']['private_key'],
			'private_key'         => '',
			'order_handle_prefix' => 'order-',
		)
	);
	// The same credentials in the live fields too: the plugin's first upgrade (from "before 2.0.0") copies the live
	// fields into the test fields when test mode is on.
	update_option(
		'woocommerce_vipps_recurring_settings',
		array(
			'enabled'                     => 'yes',
			'test_mode'                   => 'yes',
			'client_id'                   => $args['wallet']['client_id'],
			'secret_key'                  => $args['wallet']['secret_key'],
			'subscription_key'            => $args['wallet']['subscription_key'],
			'merchant_serial_number'      => $args['wallet']['merchant_serial_number'],
			'test_client_id'              => $args['wallet']['client_id'],
			'test_secret_key'             => $args['wallet']['secret_key'],
			'test_subscription_key'       => $args['wallet']['subscription_key'],
			'test_merchant_serial_number' => $args['wallet']['merchant_serial_number'],
		)
	);
	$activated = array();
	foreach ( array( 'reepay-checkout-gateway/reepay-woocommerce-payment.php', 'woo-vipps/woo-vipps.php' ) as $plugin ) {
		if ( is_plugin_active( $plugin ) ) {
			continue;
		}
		$result = activate_plugin( $plugin );
		if ( is_wp_error( $result ) ) {
			throw new RuntimeException( "activating $plugin: " . $result->get_error_message() );
		}
		$activated[] = $plugin;
	}
	return array( 'activated' => $activated );
}

/**
 * A wallet event handed to the wallet plugin's own handler as its webhook route does once the delivery's signature
 * verified (woo-vipps recurring/includes/wc-vipps-recurring.php handle_webhook_callback(), which passes the body to
 * the gateway's handle_webhook_callback()). Args: body (the event as the wallet sends it).
 */
function sidecar_cmd_wallet_plugin_webhook( array $args ): array {
	WC_Vipps_Recurring::get_instance()->gateway()->handle_webhook_callback( (array) $args['body'] );
	return array( 'handled' => true );
}

/**
 * The wallet plugin's check of pending charges, as its one-minute WP-Cron event runs it
 * (woocommerce_vipps_recurring_check_order_statuses -> check_order_statuses(): the orders of its gateway whose
 * `_vipps_recurring_pending_charge` is 1, each through check_charge_status()). Args: limit (the plugin's own
 * check_charges_amount by default). The IDs of the orders it checked.
 */
function sidecar_cmd_wallet_plugin_check_charges( array $args ): array {
	$orders = WC_Vipps_Recurring::get_instance()->check_order_statuses( isset( $args['limit'] ) ? (int) $args['limit'] : '' );
	return array( 'checked' => array_map( static fn( $order ) => $order->get_id(), $orders ) );
}

/** Which class answers each gateway id now (the real plugins' or the stand-ins). */
function sidecar_cmd_gateways( array $args ): array {
	$classes = array();
	foreach ( WC()->payment_gateways()->payment_gateways() as $id => $gateway ) {
		$classes[ $id ] = get_class( $gateway );
	}
	return $classes;
}

function sidecar_cmd_option( array $args ): array {
	$name     = (string) ( $args['name'] ?? '' );
	$previous = get_option( $name, null );
	if ( array_key_exists( 'value', $args ) && null !== $args['value'] ) {
		update_option( $name, $args['value'] );
	} else {
		delete_option( $name );
	}
	return array( 'name' => $name, 'previous' => $previous, 'value' => get_option( $name, null ) );
}

function sidecar_cmd_log_reset( array $args ): array {
	Sidecar_Test_Recorder::reset();
	return array( 'ok' => true );
}

function sidecar_cmd_log( array $args ): array {
	return Sidecar_Test_Recorder::entries( isset( $args['id'] ) ? (int) $args['id'] : null );
}

/**
 * sql {query, params?}: a SELECT (or SHOW) for assertions; {prefix} in the query is the table prefix. Params fill
 * %s/%d/%f placeholders (wpdb::prepare) or, in a query without those, `?` placeholders as in mysql2.
 */
function sidecar_cmd_sql( array $args ): array {
	global $wpdb;
	$query = str_replace( '{prefix}', $wpdb->prefix, (string) ( $args['query'] ?? '' ) );
	if ( ! preg_match( '/^\s*(SELECT|SHOW|DESCRIBE|WITH)\b/i', $query ) ) {
		throw new InvalidArgumentException( 'sql is for reading only (SELECT/SHOW)' );
	}
	$params = array_values( $args['params'] ?? array() );
	if ( $params ) {
		if ( ! preg_match( '/%[sdfi]/', $query ) ) {
			$i     = 0;
			$query = preg_replace_callback(
				'/\?/',
				static function () use ( $params, &$i ) {
					$param = $params[ $i++ ] ?? null;
					return is_int( $param ) ? '%d' : ( is_float( $param ) ? '%f' : '%s' );
				},
				$query
			);
		}
		$query = $wpdb->prepare( $query, ...$params );
	}
	$rows = $wpdb->get_results( $query, ARRAY_A );
	if ( $wpdb->last_error ) {
		throw new RuntimeException( 'sql: ' . $wpdb->last_error );
	}
	return $rows ?: array();
}

// ---------------------------------------------------------------------------------------------------------------
// users

/**
 * user {login, role, password, email?, locale?}: a user who can log in with that password (wp_insert_user, as the users
 * screen makes one), e.g. a shop_manager or a customer for browser tests. An existing login gets the role and
 * password again. Returns its ID.
 */
function sidecar_cmd_user( array $args ): array {
	$login    = (string) ( $args['login'] ?? '' );
	$role     = (string) ( $args['role'] ?? '' );
	$password = (string) ( $args['password'] ?? '' );
	if ( '' === $login || '' === $password || null === get_role( $role ) ) {
		throw new InvalidArgumentException( 'user needs a login, a password and an existing role' );
	}
	$existing = get_user_by( 'login', $login );
	$user     = array(
		'user_login' => $login,
		'user_pass'  => $password,
		'user_email' => (string) ( $args['email'] ?? "$login@shop.example.dk" ),
		'role'       => $role,
	);
	if ( $existing ) {
		$user['ID'] = $existing->ID;
		if ( wp_check_password( $password, $existing->user_pass, $existing->ID ) ) {
			// Hashed again, the password would end the user's logged-in sessions (their cookies carry part of the hash).
			unset( $user['user_pass'] );
		}
	}
	$id = $existing ? wp_update_user( $user ) : wp_insert_user( $user );
	if ( is_wp_error( $id ) ) {
		throw new RuntimeException( 'user: ' . $id->get_error_message() );
	}
	if ( isset( $args['locale'] ) ) {
		// The language of the user's profile (Users → Profile → Language); '' is the site's language.
		update_user_meta( (int) $id, 'locale', (string) $args['locale'] );
	}
	return array( 'id' => (int) $id, 'login' => $login, 'role' => $role );
}

/**
 * post {type, title, status?}: a post as the editor makes one (wp_insert_post), e.g. a published
 * cancellation_reason. Returns its ID.
 */
function sidecar_cmd_post( array $args ): array {
	$id = wp_insert_post(
		array(
			'post_type'   => (string) ( $args['type'] ?? 'post' ),
			'post_title'  => (string) ( $args['title'] ?? '' ),
			'post_status' => (string) ( $args['status'] ?? 'publish' ),
		),
		true
	);
	if ( is_wp_error( $id ) ) {
		throw new RuntimeException( 'post: ' . $id->get_error_message() );
	}
	return array( 'id' => (int) $id );
}

/**
 * state {id}: an order or subscription as WooCommerce reads it now (its data store, whichever storage is
 * authoritative): status, paid date, the subscription's next payment and pause end (GMT), and the number of
 * notes on it.
 */
function sidecar_cmd_state( array $args ): array {
	$id     = (int) ( $args['id'] ?? 0 );
	$object = wc_get_order( $id );
	if ( ! $object ) {
		throw new InvalidArgumentException( "state: no order or subscription $id" );
	}
	$state = array(
		'id'        => $id,
		'type'      => $object->get_type(),
		'status'    => $object->get_status(),
		'date_paid' => $object->get_date_paid() ? $object->get_date_paid()->date( 'Y-m-d H:i:s' ) : null,
		'notes'     => count( wc_get_order_notes( array( 'order_id' => $id ) ) ),
	);
	if ( $object instanceof WC_Subscription ) {
		$state['next_payment']      = $object->get_date( 'next_payment' ) ?: null;
		$state['auto_reactivation'] = (string) $object->get_meta( '_schedule_auto_reactivation' ) ?: null;
	}
	return $state;
}
