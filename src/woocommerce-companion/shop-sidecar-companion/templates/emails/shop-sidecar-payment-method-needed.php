<?php
/**
 * Customer e-mail "Payment method needed" (Shop Sidecar companion), HTML.
 *
 * Override it by copying it to yourtheme/woocommerce/emails/shop-sidecar-payment-method-needed.php, as
 * WooCommerce's own e-mail templates are overridden.
 *
 * @var WC_Subscription       $subscription              The subscription.
 * @var WC_Order|null         $order                     The unpaid renewal order, when there is one.
 * @var string                $kind                      failed_renewal, final_reminder, card_expiring or pre_renewal.
 * @var string                $reason                    card_declined, card_expired, wallet_action_required, wallet_amount_too_high, wallet_unavailable or retries_exhausted.
 * @var WC_DateTime|null      $deadline                  When the subscription is cancelled unless a new payment method is added.
 * @var string                $card_expires              The stored card's expiry (MM/YY), or ''.
 * @var string                $card_last4                The stored card's last four digits, or ''.
 * @var string[]              $paragraphs                What happened and what to do, as plain text.
 * @var string                $change_payment_method_url The subscription's change-payment-method page.
 * @var string                $email_heading             The heading.
 * @var string                $additional_content        The shop's extra text from the e-mail's settings.
 * @var bool                  $sent_to_admin             False.
 * @var bool                  $plain_text                False.
 * @var WC_Email              $email                     The e-mail.
 *
 * @package ShopSidecarCompanion
 * @version 1.0.0
 */

defined( 'ABSPATH' ) || exit;

$shop_sidecar_base      = (string) get_option( 'woocommerce_email_base_color', '#7f54b3' );
$shop_sidecar_base      = '' !== $shop_sidecar_base ? $shop_sidecar_base : '#7f54b3';
$shop_sidecar_base_text = wc_light_or_dark( $shop_sidecar_base, '#202020', '#ffffff' );
$shop_sidecar_name      = $subscription ? $subscription->get_billing_first_name() : '';

/**
 * The e-mail header (WC_Emails::email_header()).
 *
 * @since 1.0.0
 */
do_action( 'woocommerce_email_header', $email_heading, $email ); ?>

<p>
<?php
echo '' !== $shop_sidecar_name
	/* translators: %s: customer's first name */
	? esc_html( sprintf( __( 'Hi %s,', 'shop-sidecar-companion' ), $shop_sidecar_name ) )
	: esc_html__( 'Hi,', 'shop-sidecar-companion' );
?>
</p>

<?php foreach ( $paragraphs as $shop_sidecar_paragraph ) : ?>
<p><?php echo esc_html( $shop_sidecar_paragraph ); ?></p>
<?php endforeach; ?>

<p style="margin: 24px 0;">
	<a class="button shop-sidecar-change-payment-method" href="<?php echo esc_url( $change_payment_method_url ); ?>" style="display: inline-block; padding: 12px 20px; border-radius: 4px; background-color: <?php echo esc_attr( $shop_sidecar_base ); ?>; color: <?php echo esc_attr( $shop_sidecar_base_text ); ?>; font-weight: bold; text-decoration: none;"><?php echo esc_html__( 'Add a new payment method', 'shop-sidecar-companion' ); ?></a>
</p>
<p><?php echo esc_html__( 'You may be asked to log in to your account first.', 'shop-sidecar-companion' ); ?></p>

<?php
if ( $additional_content ) {
	echo wp_kses_post( wpautop( wptexturize( $additional_content ) ) );
}

/**
 * The e-mail footer (WC_Emails::email_footer()).
 *
 * @since 1.0.0
 */
do_action( 'woocommerce_email_footer', $email );
