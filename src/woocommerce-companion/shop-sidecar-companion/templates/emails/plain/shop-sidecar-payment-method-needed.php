<?php
/**
 * Customer e-mail "Payment method needed" (Shop Sidecar companion), plain text.
 *
 * Override it by copying it to yourtheme/woocommerce/emails/plain/shop-sidecar-payment-method-needed.php, as
 * WooCommerce's own e-mail templates are overridden. The variables are those of the HTML template.
 *
 * @var WC_Subscription $subscription
 * @var string[]        $paragraphs
 * @var string          $change_payment_method_url
 * @var string          $email_heading
 * @var string          $additional_content
 * @var WC_Email        $email
 *
 * @package ShopSidecarCompanion
 * @version 1.0.0
 */

defined( 'ABSPATH' ) || exit;

$shop_sidecar_name = $subscription ? $subscription->get_billing_first_name() : '';

echo "=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=\n";
echo esc_html( wp_strip_all_tags( $email_heading ) );
echo "\n=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=\n\n";

echo '' !== $shop_sidecar_name
	/* translators: %s: customer's first name */
	? esc_html( sprintf( __( 'Hi %s,', 'shop-sidecar-companion' ), $shop_sidecar_name ) )
	: esc_html__( 'Hi,', 'shop-sidecar-companion' );
echo "\n\n";

foreach ( $paragraphs as $shop_sidecar_paragraph ) {
	echo esc_html( $shop_sidecar_paragraph ) . "\n\n";
}

echo esc_html__( 'Add a new payment method', 'shop-sidecar-companion' ) . ":\n" . esc_url_raw( $change_payment_method_url ) . "\n\n";
echo esc_html__( 'You may be asked to log in to your account first.', 'shop-sidecar-companion' ) . "\n\n";

echo "----------------------------------------\n\n";

if ( $additional_content ) {
	echo esc_html( wp_strip_all_tags( wptexturize( $additional_content ) ) );
	echo "\n\n----------------------------------------\n\n";
}

/**
 * The shop's e-mail footer text (WooCommerce → Settings → Emails).
 *
 * @since 1.0.0
 */
echo wp_kses_post( apply_filters( 'woocommerce_email_footer_text', get_option( 'woocommerce_email_footer_text' ) ) );
