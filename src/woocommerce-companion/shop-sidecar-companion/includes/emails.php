<?php
/**
 * Shop Sidecar companion: the dunning e-mail to the customer (loaded by ../../shop-sidecar-companion.php).
 *
 * The service hands over `customer_payment_method_needed` (see includes/woocommerce-changes.php) when only the
 * customer can get a subscription paid again; WooCommerce then sends its e-mail "Payment method needed"
 * (includes/class-shop-sidecar-email-payment-method-needed.php, templates in templates/emails/) as it sends its
 * own: in the shop's language, with the shop's e-mail look, editable and switchable in WooCommerce → Settings →
 * Emails. After it went, a private note on the subscription says which e-mail went to whom, and why.
 */

defined( 'ABSPATH' ) || exit;

add_filter( 'woocommerce_email_classes', 'shop_sidecar_register_emails' );
add_filter( 'woocommerce_prepare_email_for_preview', 'shop_sidecar_prepare_email_preview' );
add_action( 'change_locale', 'shop_sidecar_reload_translations' );

/**
 * Adds the e-mail to WooCommerce's list (WooCommerce → Settings → Emails). WC_Email is loaded by then.
 *
 * @param WC_Email[] $emails WooCommerce's e-mails by class name.
 * @return WC_Email[]
 */
function shop_sidecar_register_emails( $emails ) {
	require_once SHOP_SIDECAR_COMPANION_DIR . '/includes/class-shop-sidecar-email-payment-method-needed.php';
	$emails['Shop_Sidecar_Email_Payment_Method_Needed'] = new Shop_Sidecar_Email_Payment_Method_Needed();
	return $emails;
}

/** WooCommerce's e-mail preview gives every e-mail a sample order: ours shows it as a failed renewal. */
function shop_sidecar_prepare_email_preview( $email ) {
	if ( $email instanceof Shop_Sidecar_Email_Payment_Method_Needed ) {
		$email->prepare_preview();
	}
	return $email;
}

/**
 * WooCommerce sends a customer e-mail in the shop's language (switch_to_locale()); WordPress then reloads only the
 * translations it knows the place of, so the companion's are loaded again for the new locale (and back after).
 *
 * @param string $locale The locale switched to.
 */
function shop_sidecar_reload_translations( $locale ) {
	unload_textdomain( 'shop-sidecar-companion', true );
	// The locale is named (WordPress 6.5+ keeps translations per locale; older releases ignore the argument).
	load_textdomain( 'shop-sidecar-companion', SHOP_SIDECAR_COMPANION_DIR . '/languages/shop-sidecar-companion-' . $locale . '.mo', $locale );
}

/**
 * The customer_payment_method_needed change: WooCommerce e-mails the subscription's customer and the subscription
 * gets a private note saying so. Applied once per change (the hand-over claims each row once).
 *
 * @param int   $subscription_id The subscription.
 * @param array $p               kind, order_id, reason, deadline, card_expires, masked_card.
 * @return string What was done.
 * @throws Exception When the subscription is gone, has no billing e-mail, or WordPress could not send the e-mail.
 */
function shop_sidecar_payment_method_needed( $subscription_id, array $p ) {
	$kind = (string) ( $p['kind'] ?? '' );
	if ( ! in_array( $kind, array( 'failed_renewal', 'final_reminder', 'card_expiring', 'pre_renewal' ), true ) ) {
		throw new Exception( "unknown kind '{$kind}' of payment method e-mail; nothing sent" );
	}
	$subscription = function_exists( 'wcs_get_subscription' ) ? wcs_get_subscription( $subscription_id ) : false;
	if ( ! $subscription ) {
		throw new Exception( "subscription {$subscription_id} not found; the payment method e-mail ({$kind}) was not sent" );
	}
	if ( ! is_email( (string) $subscription->get_billing_email() ) ) {
		throw new Exception( "subscription {$subscription_id} has no billing e-mail address; the payment method e-mail ({$kind}) was not sent" );
	}
	if ( $subscription->has_status( array( 'cancelled', 'expired', 'trash' ) ) ) {
		// Nothing left to save: telling the customer to act would be untrue.
		return 'subscription is ' . $subscription->get_status() . '; e-mail not sent';
	}
	$order = ! empty( $p['order_id'] ) ? wc_get_order( (int) $p['order_id'] ) : false;
	if ( ! in_array( $kind, array( 'card_expiring', 'pre_renewal' ), true ) && $order instanceof WC_Order && $order->is_paid() ) {
		return 'renewal order ' . $order->get_id() . ' is ' . $order->get_status() . ' (paid); e-mail not sent';
	}

	$emails = WC()->mailer()->get_emails();
	$email  = $emails['Shop_Sidecar_Email_Payment_Method_Needed'] ?? null;
	if ( ! $email instanceof Shop_Sidecar_Email_Payment_Method_Needed ) {
		throw new Exception( 'the e-mail shop_sidecar_payment_method_needed is not among WooCommerce\'s e-mails (a plugin removed it from woocommerce_email_classes); nothing sent' );
	}
	$email->prepare( $subscription, $p );
	$recipient = $subscription->get_billing_email();

	if ( ! $email->is_enabled() ) {
		$subscription->add_order_note(
			/* translators: 1: the e-mail's title, 2: which kind of it */
			sprintf( __( 'The "%1$s" e-mail (%2$s) is turned off in WooCommerce → Settings → Emails, so the customer was not told.', 'shop-sidecar-companion' ), $email->get_title(), $email->kind_label() )
		);
		return "e-mail turned off in WooCommerce's settings; not sent ({$kind}, {$email->reason})";
	}

	$sent = $email->trigger();
	// The note is for the shop: in the language of this request, not the customer's.
	$title = $email->get_title();
	if ( ! $sent ) {
		$subscription->add_order_note(
			/* translators: 1: the e-mail's title, 2: which kind of it, 3: e-mail address */
			sprintf( __( 'The "%1$s" e-mail (%2$s) to %3$s could not be sent.', 'shop-sidecar-companion' ), $title, $email->kind_label(), $recipient )
		);
		throw new Exception( "WordPress could not send the payment method e-mail ({$kind}) to {$recipient} (wp_mail failed)" );
	}
	$why = $email->why_for_shop();
	$subscription->add_order_note(
		$why
			/* translators: 1: the e-mail's title, 2: which kind of it, 3: e-mail address, 4: why, a list */
			? sprintf( __( 'The "%1$s" e-mail (%2$s) was sent to %3$s: %4$s.', 'shop-sidecar-companion' ), $title, $email->kind_label(), $recipient, implode( '; ', $why ) )
			/* translators: 1: the e-mail's title, 2: which kind of it, 3: e-mail address */
			: sprintf( __( 'The "%1$s" e-mail (%2$s) was sent to %3$s.', 'shop-sidecar-companion' ), $title, $email->kind_label(), $recipient )
	);
	return "e-mail sent to {$recipient} ({$kind}, {$email->reason})";
}
