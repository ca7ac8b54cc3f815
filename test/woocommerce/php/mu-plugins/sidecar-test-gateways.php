<?php
/**
 * Plugin Name: Sidecar test gateways
 * Description: Test only. Empty payment gateways with the ids the shop's real gateways use, so WooCommerce shows
 * their titles and WooCommerce Subscriptions treats subscriptions paid with them as automatic (it does only
 * when the subscription's gateway is registered and supports subscriptions). Nothing is ever charged.
 */

defined( 'ABSPATH' ) || exit;

const SIDECAR_TEST_GATEWAYS = array(
	'reepay_checkout' => 'Card',
	'vipps_recurring' => 'MobilePay',
);

/**
 * Whether the provider's own plugin for a gateway id is active in this shop (provider-plugins.ts): then the
 * stand-in steps aside. Read from the active plugins, as the plugins are loaded only after the must-use plugins.
 */
function sidecar_test_real_gateway_active( string $id ): bool {
	$plugins = array(
		'reepay_checkout' => 'reepay-checkout-gateway/reepay-woocommerce-payment.php',
		'vipps_recurring' => 'woo-vipps/woo-vipps.php',
	);
	return isset( $plugins[ $id ] ) && in_array( $plugins[ $id ], (array) get_option( 'active_plugins', array() ), true );
}

// WC_Payment_Gateway exists only once WooCommerce is loaded, after the must-use plugins.
add_action(
	'plugins_loaded',
	static function () {
		if ( ! class_exists( 'WC_Payment_Gateway' ) ) {
			return;
		}

		if ( ! class_exists( 'Sidecar_Test_Gateway' ) ) {
			final class Sidecar_Test_Gateway extends WC_Payment_Gateway {
				public function __construct( string $id, string $title ) {
					$this->id                 = $id;
					$this->title              = $title;
					$this->method_title       = "$title (test)";
					$this->method_description = 'Test-only gateway: never charges.';
					$this->has_fields         = false;
					$this->supports           = array(
						'products',
						'subscriptions',
						'subscription_cancellation',
						'subscription_suspension',
						'subscription_reactivation',
						'subscription_amount_changes',
						'subscription_date_changes',
						'multiple_subscriptions',
						'refunds',
					);
					$this->form_fields        = array(
						'enabled' => array( 'type' => 'checkbox', 'default' => 'yes' ),
						'title'   => array( 'type' => 'text', 'default' => $title ),
					);
					$this->init_settings();
					$this->enabled = 'yes';
					$this->title   = $title;
				}

				public function process_payment( $order_id ) {
					return array( 'result' => 'success', 'redirect' => '' );
				}

				/** Refunds succeed without a provider (wc_create_refund with refund_payment true ends here). */
				public function process_refund( $order_id, $amount = null, $reason = '' ) {
					return true;
				}
			}
		}

		add_filter(
			'woocommerce_payment_gateways',
			static function ( $gateways ) {
				foreach ( SIDECAR_TEST_GATEWAYS as $id => $title ) {
					// The provider's own plugin, where a test runs it, registers the real gateway of that id.
					if ( sidecar_test_real_gateway_active( $id ) ) {
						continue;
					}
					$gateways[] = new Sidecar_Test_Gateway( $id, $title );
				}
				return $gateways;
			}
		);

		// Subscriptions fires this to have the gateway charge a renewal. A real gateway charges and then marks the
		// renewal paid or failed; here the renewal stays pending, which is what the service then acts on.
		foreach ( array_keys( SIDECAR_TEST_GATEWAYS ) as $id ) {
			if ( sidecar_test_real_gateway_active( $id ) ) {
				continue;
			}
			add_action( "woocommerce_scheduled_subscription_payment_$id", '__return_null', 10, 2 );
		}
	},
	0
);
