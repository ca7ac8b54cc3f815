<?php
/**
 * Plugin Name: Shop Sidecar companion
 * Description: Applies the order and subscription changes the shop-sidecar service decides, with WooCommerce's and WooCommerce Subscriptions' own calls (including the customer e-mail "Payment method needed" of the dunning); tells the service at once when a renewal is paid or cancelled in the shop, moved to the bin, or its subscription ends; and gives staff the service's Support panel on each subscription and Payments panel on each order in WP admin.
 * Version: 5
 * Requires PHP: 7.4
 * Text Domain: shop-sidecar-companion
 * Domain Path: /shop-sidecar-companion/languages
 *
 * Install as a must-use plugin: copy this file AND the folder shop-sidecar-companion/ next to it into
 * wp-content/mu-plugins/. WordPress loads only the files at the top of mu-plugins/, so this file loads the
 * rest from the folder:
 *
 *   includes/woocommerce-changes.php  the changes the service hands over (see that file's header)
 *   includes/admin-panels.php         the staff panels on the subscription and order edit screens
 *   includes/shop-notices.php         tells the service at once of a renewal the shop settled itself or that no longer wants money (see its header)
 *   includes/emails.php               the customer e-mail "Payment method needed" (templates/emails/)
 *   assets/                           the panels' script and style (WordPress's own packages, no build step)
 *   languages/                        the Danish translation (da_DK)
 */

defined( 'ABSPATH' ) || exit;

const SHOP_SIDECAR_COMPANION_DIR = __DIR__ . '/shop-sidecar-companion';

if ( ! is_file( SHOP_SIDECAR_COMPANION_DIR . '/includes/woocommerce-changes.php' ) ) {
	// Only this file was copied: say so where staff and the operator look, instead of failing the site.
	add_action(
		'admin_notices',
		static function () {
			if ( current_user_can( 'manage_options' ) ) {
				echo '<div class="notice notice-error"><p>' . esc_html( 'Shop Sidecar companion: the folder shop-sidecar-companion/ is missing next to shop-sidecar-companion.php in wp-content/mu-plugins/. Copy both.' ) . '</p></div>';
			}
		}
	);
	return;
}

require_once SHOP_SIDECAR_COMPANION_DIR . '/includes/woocommerce-changes.php';
require_once SHOP_SIDECAR_COMPANION_DIR . '/includes/admin-panels.php';
require_once SHOP_SIDECAR_COMPANION_DIR . '/includes/shop-notices.php';
require_once SHOP_SIDECAR_COMPANION_DIR . '/includes/emails.php';
