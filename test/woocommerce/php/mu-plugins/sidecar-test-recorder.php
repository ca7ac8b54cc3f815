<?php
/**
 * Plugin Name: Sidecar test recorder
 * Description: Test only. Records the e-mails WordPress would send (none is sent) and the firing of the order and
 * subscription hooks other plugins listen to, in {prefix}sidecar_test_log, so a test can compare what happened
 * around a change made by the service with what happens around the same change made by WooCommerce itself.
 */

defined( 'ABSPATH' ) || exit;

final class Sidecar_Test_Recorder {
	/** Hooks whose name starts with one of these are recorded (when they fire as actions). */
	const PREFIXES = array(
		'woocommerce_order_status_',
		'woocommerce_payment_complete', // also woocommerce_payment_complete_order_status_{status}
		'woocommerce_order_payment_status_changed',
		'woocommerce_subscription_status_',
		'woocommerce_subscription_payment_',
		'woocommerce_subscription_renewal_payment_',
		'woocommerce_scheduled_subscription_',
		'woocommerce_order_refunded',
		'woocommerce_refund_created',
		'woocommerce_new_order_note',
		'woocommerce_subscription_date_updated',
		'woocommerce_subscription_date_deleted',
		'woocommerce_order_note_added',
	);
	/** Recorded by exact name: as prefixes they would also catch e.g. woocommerce_update_order_item. */
	const EXACT = array( 'woocommerce_update_order', 'woocommerce_update_subscription' );

	/** @var bool Recording on (default) or off (set_recording). */
	private static $on = true;
	/** @var bool Set while the recorder itself writes, so its own queries and hooks are not recorded. */
	private static $busy = false;
	/** @var bool Whether the log table is known to exist in this process. */
	private static $table_ready = false;
	/** @var array<string,int> did_action() counts seen so far, to tell an action from a filter of the same name. */
	private static $seen = array();
	/** @var array|null The WooCommerce e-mail being sent, between woocommerce_mail_callback_params and wp_mail. */
	private static $pending_email = null;

	public static function table(): string {
		global $wpdb;
		return $wpdb->prefix . 'sidecar_test_log';
	}

	public static function ensure_table(): void {
		global $wpdb;
		if ( self::$table_ready ) {
			return;
		}
		$table = self::table();
		$wpdb->query(
			"CREATE TABLE IF NOT EXISTS `$table` (
				seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
				kind VARCHAR(10) NOT NULL,
				name VARCHAR(191) NOT NULL,
				object_id BIGINT UNSIGNED NULL,
				detail LONGTEXT NULL,
				recorded_at DATETIME(6) NOT NULL,
				KEY object_id (object_id)
			) DEFAULT CHARSET=utf8mb4"
		);
		self::$table_ready = true;
	}

	public static function set_recording( bool $on ): void {
		self::$on = $on;
	}

	public static function reset(): void {
		global $wpdb;
		self::ensure_table();
		$wpdb->query( 'TRUNCATE TABLE `' . self::table() . '`' );
	}

	/** @return array<int,array> The log, oldest first; $object_id limits it to one order or subscription. */
	public static function entries( ?int $object_id = null ): array {
		global $wpdb;
		self::ensure_table();
		$table = self::table();
		$rows  = null === $object_id
			? $wpdb->get_results( "SELECT * FROM `$table` ORDER BY seq", ARRAY_A )
			: $wpdb->get_results( $wpdb->prepare( "SELECT * FROM `$table` WHERE object_id = %d ORDER BY seq", $object_id ), ARRAY_A );
		return array_map(
			static function ( $row ) {
				return array(
					'seq'       => (int) $row['seq'],
					'kind'      => $row['kind'],
					'name'      => $row['name'],
					'object_id' => null === $row['object_id'] ? null : (int) $row['object_id'],
					'detail'    => json_decode( (string) $row['detail'], true ),
				);
			},
			$rows ?: array()
		);
	}

	private static function record( string $kind, string $name, ?int $object_id, array $detail ): void {
		global $wpdb;
		if ( ! self::$on || self::$busy || ! isset( $wpdb ) || ( function_exists( 'wp_installing' ) && wp_installing() ) ) {
			return;
		}
		self::$busy = true;
		try {
			self::ensure_table();
			// A plain query, not $wpdb->insert(), which would run filters of its own.
			$object_sql = null === $object_id ? 'NULL' : (string) (int) $object_id;
			$wpdb->query(
				$wpdb->prepare(
					'INSERT INTO `' . self::table() . "` (kind, name, object_id, detail, recorded_at) VALUES (%s, %s, $object_sql, %s, UTC_TIMESTAMP(6))",
					$kind,
					$name,
					wp_json_encode( $detail )
				)
			);
		} finally {
			self::$busy = false;
		}
	}

	/** A hook argument as JSON-able detail: scalars as they are, orders and other objects by class and id. */
	private static function describe( $arg ) {
		if ( null === $arg || is_scalar( $arg ) ) {
			return $arg;
		}
		if ( is_object( $arg ) ) {
			$out = array( 'class' => get_class( $arg ) );
			if ( method_exists( $arg, 'get_id' ) ) {
				$out['id'] = $arg->get_id();
			} elseif ( isset( $arg->ID ) ) {
				$out['id'] = (int) $arg->ID;
			}
			return $out;
		}
		return is_array( $arg ) ? array( 'array' => count( $arg ) ) : gettype( $arg );
	}

	/** The order or subscription a hook is about: an order object among its arguments, else its first int. */
	private static function object_id( array $args ): ?int {
		// WooCommerce's *_notification hooks pass the original arguments as one array.
		if ( 1 === count( $args ) && is_array( $args[0] ) ) {
			$args = array_values( $args[0] );
		}
		foreach ( $args as $arg ) {
			if ( $arg instanceof WC_Abstract_Order ) {
				return $arg->get_id();
			}
		}
		if ( isset( $args[0] ) && ( is_int( $args[0] ) || ( is_string( $args[0] ) && ctype_digit( $args[0] ) ) ) ) {
			return (int) $args[0];
		}
		return null;
	}

	private static function wanted( string $hook ): bool {
		if ( in_array( $hook, self::EXACT, true ) ) {
			return true;
		}
		foreach ( self::PREFIXES as $prefix ) {
			if ( 0 === strncmp( $hook, $prefix, strlen( $prefix ) ) ) {
				return true;
			}
		}
		return false;
	}

	/** 'all' runs for every action and filter; do_action() counts the action before calling it, apply_filters() does not. */
	public static function on_all( ...$all ): void {
		$hook = (string) ( $all[0] ?? '' );
		if ( self::$busy || ! self::wanted( $hook ) ) {
			return;
		}
		$count = did_action( $hook );
		if ( $count <= ( self::$seen[ $hook ] ?? 0 ) ) {
			return; // A filter (e.g. woocommerce_payment_complete_order_status).
		}
		self::$seen[ $hook ] = $count;
		$args                = array_slice( $all, 1 );
		$detail              = array_map( array( __CLASS__, 'describe' ), $args );
		if ( false !== strpos( $hook, '_note' ) && isset( $detail[0] ) && is_int( $detail[0] ) ) {
			$detail[0] = array( 'note_id' => $detail[0] ); // a comment id, not an order's: say so for comparisons
		}
		self::record( 'hook', $hook, self::object_id( $args ), array( 'args' => $detail ) );
	}

	/** WC_Email::send() passes itself here just before calling wp_mail(). */
	public static function on_mail_params( $params, $email = null ) {
		if ( $email instanceof WC_Email ) {
			$object              = $email->object;
			self::$pending_email = array(
				'email_id'     => $email->id,
				'object_class' => is_object( $object ) ? get_class( $object ) : null,
				'object_id'    => $object instanceof WC_Abstract_Order ? $object->get_id() : null,
				'customer'     => $email->is_customer_email(),
			);
		}
		return $params;
	}

	/** Every e-mail stops here: returning true tells wp_mail() (and WooCommerce) it was sent. */
	public static function on_pre_wp_mail( $short_circuit, $atts ) {
		$email               = self::$pending_email ?? array( 'email_id' => null, 'object_class' => null, 'object_id' => null, 'customer' => null );
		self::$pending_email = null;
		$to                  = is_array( $atts['to'] ) ? $atts['to'] : array_map( 'trim', explode( ',', (string) $atts['to'] ) );
		self::record(
			'mail',
			$email['email_id'] ?? 'wp_mail',
			$email['object_id'],
			array(
				'to'           => array_values( $to ),
				'subject'      => (string) $atts['subject'],
				'object_class' => $email['object_class'],
				'customer'     => $email['customer'],
			)
		);
		return true;
	}
}

add_action( 'all', array( 'Sidecar_Test_Recorder', 'on_all' ) );
add_filter( 'woocommerce_mail_callback_params', array( 'Sidecar_Test_Recorder', 'on_mail_params' ), PHP_INT_MAX, 2 );
add_filter( 'pre_wp_mail', array( 'Sidecar_Test_Recorder', 'on_pre_wp_mail' ), PHP_INT_MAX, 2 );
