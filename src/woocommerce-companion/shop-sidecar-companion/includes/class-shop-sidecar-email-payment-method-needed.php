<?php
/**
 * Shop Sidecar companion: the customer e-mail "Payment method needed" (loaded by includes/emails.php when
 * WooCommerce builds its list of e-mails, so WC_Email exists).
 *
 * A WooCommerce e-mail like the shop's own: listed in WooCommerce → Settings → Emails (id
 * shop_sidecar_payment_method_needed, sent to the customer, on by default), with its subject, heading, extra text
 * and format editable there, and its templates overridable by the theme as WooCommerce's own are:
 *
 *   yourtheme/woocommerce/emails/shop-sidecar-payment-method-needed.php        (HTML)
 *   yourtheme/woocommerce/emails/plain/shop-sidecar-payment-method-needed.php  (plain text)
 *
 * It tells the customer plainly what happened and links to the subscription's change-payment-method page, the
 * address Subscriptions itself gives that page (WC_Subscription::get_change_payment_method_url()). Three kinds:
 * failed_renewal (only the customer can fix a failed renewal), final_reminder (the subscription is cancelled at a
 * deadline unless a new payment method is added) and card_expiring (the stored card expires before the next
 * renewal) and pre_renewal (a few days before the next renewal the payment method was found not to work at its
 * provider: a card not active, a wallet agreement stopped or expired). Each kind has its own subject and heading setting; the one named plainly "Subject"/"Email heading" is
 * the failed renewal's.
 */

defined( 'ABSPATH' ) || exit;

class Shop_Sidecar_Email_Payment_Method_Needed extends WC_Email {

	const ID    = 'shop_sidecar_payment_method_needed';
	const KINDS = array( 'failed_renewal', 'final_reminder', 'card_expiring', 'pre_renewal' );

	/** @var string One of KINDS, for the e-mail being sent. */
	public $kind = 'failed_renewal';

	/** @var string Why (card_declined, card_expired, wallet_action_required, wallet_amount_too_high, wallet_unavailable, retries_exhausted). */
	public $reason = '';

	/** @var WC_Order|null The unpaid renewal order, when there is one. */
	public $renewal_order = null;

	/** @var WC_DateTime|null When the subscription is cancelled unless a new payment method is added, in the shop's time zone. */
	public $deadline = null;

	/** @var string The stored card's expiry as MM/YY, or ''. */
	public $card_expires = '';

	/** @var string The stored card's last four digits, or ''. */
	public $card_last4 = '';

	public function __construct() {
		$this->id             = self::ID;
		$this->customer_email = true;
		$this->title          = __( 'Payment method needed', 'shop-sidecar-companion' );
		$this->description    = __( 'Sent to the customer when a subscription needs a new payment method: a renewal payment failed in a way only the customer can fix, the last reminder before the subscription is cancelled, or the stored card expires before the next renewal. It links to the page where the customer adds a new payment method.', 'shop-sidecar-companion' );
		$this->template_base  = SHOP_SIDECAR_COMPANION_DIR . '/templates/';
		$this->template_html  = 'emails/shop-sidecar-payment-method-needed.php';
		$this->template_plain = 'emails/plain/shop-sidecar-payment-method-needed.php';
		$this->placeholders   = array(
			'{subscription_number}' => '',
			'{order_number}'        => '',
			'{deadline}'            => '',
		);
		parent::__construct();
	}

	/**
	 * Sets what this sending is about. The deadline comes as ISO 8601 (UTC), the card's expiry as MM-YY and its
	 * number masked (only its last four digits are shown).
	 *
	 * @param WC_Order $subscription The subscription (a dummy order in WooCommerce's e-mail preview).
	 * @param array    $details      kind, order_id, reason, deadline, card_expires, masked_card.
	 */
	public function prepare( $subscription, array $details ) {
		$kind                = (string) ( $details['kind'] ?? '' );
		$this->object        = $subscription;
		$this->recipient     = $subscription->get_billing_email();
		$this->kind          = in_array( $kind, self::KINDS, true ) ? $kind : 'failed_renewal';
		$this->reason        = (string) ( $details['reason'] ?? '' );
		$order               = ! empty( $details['order_id'] ) ? wc_get_order( (int) $details['order_id'] ) : false;
		$this->renewal_order = $order instanceof WC_Order ? $order : null;
		$this->deadline      = self::datetime( $details['deadline'] ?? null );
		$this->card_expires  = self::card_expiry( $details['card_expires'] ?? null );
		$this->card_last4    = self::last4( $details['masked_card'] ?? null );
	}

	/**
	 * Sends the e-mail in the shop's language (WooCommerce switches to it for customer e-mails).
	 *
	 * @return bool Whether WordPress took it.
	 */
	public function trigger() {
		$this->setup_locale();
		try {
			$this->placeholders['{subscription_number}'] = $this->object ? $this->object->get_order_number() : '';
			$this->placeholders['{order_number}']        = $this->renewal_order ? $this->renewal_order->get_order_number() : '';
			$this->placeholders['{deadline}']            = $this->deadline ? wc_format_datetime( $this->deadline ) : '';
			return (bool) $this->send( $this->get_recipient(), $this->get_subject(), $this->get_content(), $this->get_headers(), $this->get_attachments() );
		} finally {
			$this->restore_locale();
		}
	}

	/** What WooCommerce's e-mail preview (WooCommerce 9.6+) shows: a failed renewal of its sample order. */
	public function prepare_preview() {
		$this->kind          = 'failed_renewal';
		$this->reason        = 'card_declined';
		$this->renewal_order = $this->object instanceof WC_Order ? $this->object : null;
		$this->deadline      = self::datetime( gmdate( 'Y-m-d\TH:i:s\Z', time() + 14 * DAY_IN_SECONDS ) );
		$this->card_expires  = '';
		$this->card_last4    = '';
		$this->placeholders['{order_number}'] = $this->renewal_order ? $this->renewal_order->get_order_number() : '';
		$this->placeholders['{deadline}']     = wc_format_datetime( $this->deadline );
	}

	/** The settings: WooCommerce's own, and a subject and heading for the final reminder and the card expiring. */
	public function init_form_fields() {
		parent::init_form_fields();
		$fields = array();
		foreach ( $this->form_fields as $key => $field ) {
			if ( 'subject' === $key ) {
				$field['title'] = __( 'Subject (failed renewal)', 'shop-sidecar-companion' );
			} elseif ( 'heading' === $key ) {
				$field['title'] = __( 'Email heading (failed renewal)', 'shop-sidecar-companion' );
			}
			$fields[ $key ] = $field;
			if ( 'heading' !== $key ) {
				continue;
			}
			$titles = array(
				'final_reminder' => array( __( 'Subject (final reminder)', 'shop-sidecar-companion' ), __( 'Email heading (final reminder)', 'shop-sidecar-companion' ) ),
				'card_expiring'  => array( __( 'Subject (card expiring)', 'shop-sidecar-companion' ), __( 'Email heading (card expiring)', 'shop-sidecar-companion' ) ),
				'pre_renewal'    => array( __( 'Subject (before the renewal)', 'shop-sidecar-companion' ), __( 'Email heading (before the renewal)', 'shop-sidecar-companion' ) ),
			);
			foreach ( $titles as $kind => list( $subject_title, $heading_title ) ) {
				$fields[ 'subject_' . $kind ] = array(
					'title'       => $subject_title,
					'type'        => 'text',
					'desc_tip'    => true,
					'description' => $this->form_fields['subject']['description'] ?? '',
					'placeholder' => $this->default_subject_for( $kind ),
					'default'     => '',
				);
				$fields[ 'heading_' . $kind ] = array(
					'title'       => $heading_title,
					'type'        => 'text',
					'desc_tip'    => true,
					'description' => $this->form_fields['heading']['description'] ?? '',
					'placeholder' => $this->default_heading_for( $kind ),
					'default'     => '',
				);
			}
		}
		$this->form_fields = $fields;
	}

	public function get_default_subject() {
		return $this->default_subject_for( $this->kind );
	}

	public function get_default_heading() {
		return $this->default_heading_for( $this->kind );
	}

	public function get_default_additional_content() {
		return __( 'If you have any questions, just reply to this e-mail.', 'shop-sidecar-companion' );
	}

	/** The subject of this kind: its own setting (the plain "Subject" setting is the failed renewal's). */
	public function get_subject() {
		if ( 'failed_renewal' === $this->kind ) {
			return parent::get_subject();
		}
		$subject = $this->format_string( $this->get_option( 'subject_' . $this->kind, $this->default_subject_for( $this->kind ) ) );
		/** This filter is documented in WooCommerce's WC_Email::get_subject(). */
		return apply_filters( 'woocommerce_email_subject_' . $this->id, $subject, $this->object, $this );
	}

	/** The heading of this kind: its own setting (the plain "Email heading" setting is the failed renewal's). */
	public function get_heading() {
		if ( 'failed_renewal' === $this->kind ) {
			return parent::get_heading();
		}
		$heading = $this->format_string( $this->get_option( 'heading_' . $this->kind, $this->default_heading_for( $this->kind ) ) );
		/** This filter is documented in WooCommerce's WC_Email::get_heading(). */
		return apply_filters( 'woocommerce_email_heading_' . $this->id, $heading, $this->object, $this );
	}

	public function default_subject_for( $kind ) {
		switch ( $kind ) {
			case 'final_reminder':
				return __( 'Last reminder: your {site_title} subscription will be cancelled on {deadline}', 'shop-sidecar-companion' );
			case 'card_expiring':
				return __( 'Your card for your {site_title} subscription is about to expire', 'shop-sidecar-companion' );
			case 'pre_renewal':
				return __( 'Your next {site_title} subscription payment will not go through', 'shop-sidecar-companion' );
			default:
				return __( 'Your {site_title} subscription payment did not go through', 'shop-sidecar-companion' );
		}
	}

	public function default_heading_for( $kind ) {
		switch ( $kind ) {
			case 'final_reminder':
				return __( 'Your subscription will be cancelled soon', 'shop-sidecar-companion' );
			case 'card_expiring':
				return __( 'Your card is about to expire', 'shop-sidecar-companion' );
			case 'pre_renewal':
				return __( 'Please update your payment method', 'shop-sidecar-companion' );
			default:
				return __( 'Please add a new payment method', 'shop-sidecar-companion' );
		}
	}

	public function get_content_html() {
		return wc_get_template_html( $this->template_html, $this->template_args( false ), '', $this->template_base );
	}

	public function get_content_plain() {
		return wc_get_template_html( $this->template_plain, $this->template_args( true ), '', $this->template_base );
	}

	/** What the templates are given (a theme's copy can use any of it). */
	protected function template_args( $plain_text ) {
		return array(
			'subscription'              => $this->object,
			'order'                     => $this->renewal_order,
			'kind'                      => $this->kind,
			'reason'                    => $this->reason,
			'deadline'                  => $this->deadline,
			'card_expires'              => $this->card_expires,
			'card_last4'                => $this->card_last4,
			'paragraphs'                => $this->get_paragraphs(),
			'change_payment_method_url' => $this->get_change_payment_method_url(),
			'email_heading'             => $this->get_heading(),
			'additional_content'        => $this->get_additional_content(),
			'sent_to_admin'             => false,
			'plain_text'                => $plain_text,
			'email'                     => $this,
		);
	}

	/** Subscriptions' own address of the subscription's change-payment-method page (it adds its nonce once the customer is logged in). */
	public function get_change_payment_method_url() {
		if ( $this->object instanceof WC_Subscription ) {
			return $this->object->get_change_payment_method_url();
		}
		return wc_get_page_permalink( 'myaccount' ); // WooCommerce's e-mail preview has no subscription.
	}

	/**
	 * What happened and what to do, one paragraph each, as plain text (the templates escape it).
	 *
	 * @return string[]
	 */
	public function get_paragraphs() {
		$subscription_number = $this->object ? $this->object->get_order_number() : '';
		$deadline            = $this->deadline ? wc_format_datetime( $this->deadline ) : '';
		$paragraphs          = array();

		if ( 'card_expiring' === $this->kind ) {
			if ( '' !== $this->card_last4 && '' !== $this->card_expires ) {
				/* translators: 1: the card's last four digits, 2: its expiry month and year (MM/YY) */
				$expires = sprintf( __( 'The card ending in %1$s that pays for your subscription expires %2$s, before your next renewal.', 'shop-sidecar-companion' ), $this->card_last4, $this->card_expires );
			} elseif ( '' !== $this->card_expires ) {
				/* translators: %s: the card's expiry month and year (MM/YY) */
				$expires = sprintf( __( 'The card that pays for your subscription expires %s, before your next renewal.', 'shop-sidecar-companion' ), $this->card_expires );
			} else {
				$expires = __( 'The card that pays for your subscription expires before your next renewal.', 'shop-sidecar-companion' );
			}
			$next = $this->object instanceof WC_Subscription ? $this->object->get_time( 'next_payment', 'site' ) : 0;
			if ( $next > 0 ) {
				/* translators: %s: date of the next renewal */
				$expires .= ' ' . sprintf( __( 'Your next renewal is on %s.', 'shop-sidecar-companion' ), date_i18n( wc_date_format(), $next ) );
			}
			$paragraphs[] = $expires;
			$paragraphs[] = __( 'Please add a new payment method before then, so that your subscription continues without interruption.', 'shop-sidecar-companion' );
			return $paragraphs;
		}

		if ( 'pre_renewal' === $this->kind ) {
			$next = $this->object instanceof WC_Subscription ? $this->object->get_time( 'next_payment', 'site' ) : 0;
			$paragraphs[] = $next > 0
				/* translators: 1: subscription number, 2: date of the next renewal */
				? sprintf( __( 'Your next payment for subscription #%1$s on %2$s will not go through: the payment method on file can no longer be charged.', 'shop-sidecar-companion' ), $subscription_number, date_i18n( wc_date_format(), $next ) )
				/* translators: %s: subscription number */
				: sprintf( __( 'Your next payment for subscription #%s will not go through: the payment method on file can no longer be charged.', 'shop-sidecar-companion' ), $subscription_number );
			$paragraphs[] = __( 'Please update your payment method before then, so that your subscription continues without interruption.', 'shop-sidecar-companion' );
			return $paragraphs;
		}

		if ( $this->renewal_order ) {
			/* translators: 1: renewal order number, 2: subscription number */
			$failed = sprintf( __( 'We could not take the payment for renewal order #%1$s of your subscription #%2$s.', 'shop-sidecar-companion' ), $this->renewal_order->get_order_number(), $subscription_number );
		} else {
			/* translators: %s: subscription number */
			$failed = sprintf( __( 'We could not take the latest renewal payment for your subscription #%s.', 'shop-sidecar-companion' ), $subscription_number );
		}
		$why          = $this->reason_for_customer();
		$paragraphs[] = '' === $why ? $failed : $failed . ' ' . $why;

		if ( 'final_reminder' === $this->kind ) {
			$paragraphs[] = '' !== $deadline
				/* translators: %s: the date the subscription is cancelled */
				? sprintf( __( 'This is our last reminder: your subscription will be cancelled on %s unless you add a new payment method before then.', 'shop-sidecar-companion' ), $deadline )
				: __( 'This is our last reminder: your subscription will be cancelled soon unless you add a new payment method.', 'shop-sidecar-companion' );
			return $paragraphs;
		}

		$todo = __( 'Please add a new payment method, so that we can take the payment and your subscription can continue.', 'shop-sidecar-companion' );
		if ( '' !== $deadline ) {
			/* translators: %s: the date the subscription is cancelled */
			$todo .= ' ' . sprintf( __( 'If no new payment method has been added by %s, your subscription will be cancelled.', 'shop-sidecar-companion' ), $deadline );
		}
		$paragraphs[] = $todo;
		return $paragraphs;
	}

	/** Why the payment failed, in the customer's words ('' for a reason this e-mail does not know). */
	public function reason_for_customer() {
		switch ( $this->reason ) {
			case 'card_declined':
				return __( 'Your card was declined by your bank, and trying it again will not help.', 'shop-sidecar-companion' );
			case 'card_expired':
				return __( 'The card we have on file has expired.', 'shop-sidecar-companion' );
			case 'wallet_action_required':
				return __( 'Your mobile wallet could not take the payment. Its app tells you why, and you can put it right there.', 'shop-sidecar-companion' );
			case 'wallet_amount_too_high':
				// What to change: the wallet refused the charge and told the customer nothing in its app.
				return __( 'The amount is above the maximum you approved in your payment agreement in your mobile wallet.', 'shop-sidecar-companion' )
					. ' ' . __( 'You can raise the maximum in its app, and we will then take the payment from the same agreement; or add a new payment method as below.', 'shop-sidecar-companion' );
			case 'wallet_unavailable':
				return __( 'Your mobile wallet could not be charged, for a reason only you can resolve in its app.', 'shop-sidecar-companion' );
			case 'retries_exhausted':
				return __( 'We have tried again several times, and none of the attempts went through.', 'shop-sidecar-companion' );
		}
		return '';
	}

	/** The kind, in the shop's words (for the subscription note). */
	public function kind_label() {
		switch ( $this->kind ) {
			case 'final_reminder':
				return __( 'final reminder', 'shop-sidecar-companion' );
			case 'card_expiring':
				return __( 'card expiring', 'shop-sidecar-companion' );
			case 'pre_renewal':
				return __( 'before the renewal', 'shop-sidecar-companion' );
			default:
				return __( 'failed renewal', 'shop-sidecar-companion' );
		}
	}

	/**
	 * Why it went, in the shop's words (for the subscription note): the reason and the facts the e-mail gave.
	 *
	 * @return string[]
	 */
	public function why_for_shop() {
		$why = array();
		switch ( $this->reason ) {
			case 'card_declined':
				$why[] = __( 'the card was declined for good', 'shop-sidecar-companion' );
				break;
			case 'card_expired':
				$why[] = __( 'the card has expired', 'shop-sidecar-companion' );
				break;
			case 'wallet_action_required':
				$why[] = __( 'the mobile wallet needs the customer to act in its app', 'shop-sidecar-companion' );
				break;
			case 'wallet_amount_too_high':
				$why[] = __( 'the amount is above the maximum of the payment agreement', 'shop-sidecar-companion' );
				break;
			case 'wallet_unavailable':
				$why[] = __( 'the mobile wallet cannot be charged', 'shop-sidecar-companion' );
				break;
			case 'retries_exhausted':
				$why[] = __( 'the retries are used up', 'shop-sidecar-companion' );
				break;
		}
		if ( $this->renewal_order && 'card_expiring' !== $this->kind ) {
			/* translators: %s: order number */
			$why[] = sprintf( __( 'renewal order #%s', 'shop-sidecar-companion' ), $this->renewal_order->get_order_number() );
		}
		if ( $this->deadline && 'card_expiring' !== $this->kind ) {
			/* translators: %s: date */
			$why[] = sprintf( __( 'cancelled on %s unless a new payment method is added', 'shop-sidecar-companion' ), wc_format_datetime( $this->deadline ) );
		}
		if ( '' !== $this->card_last4 ) {
			/* translators: %s: the card's last four digits */
			$why[] = sprintf( __( 'card ending in %s', 'shop-sidecar-companion' ), $this->card_last4 );
		}
		if ( '' !== $this->card_expires ) {
			/* translators: %s: month and year (MM/YY) */
			$why[] = sprintf( __( 'card expires %s', 'shop-sidecar-companion' ), $this->card_expires );
		}
		return $why;
	}

	/**
	 * An ISO 8601 moment (UTC) as a date in the shop's time zone, or null.
	 *
	 * @param mixed $value The payload's value.
	 * @return WC_DateTime|null
	 */
	private static function datetime( $value ) {
		$timestamp = is_string( $value ) && '' !== $value ? strtotime( $value ) : false;
		if ( false === $timestamp ) {
			return null;
		}
		// WooCommerce's own conversion: in the site's time zone (a named zone, or its UTC offset).
		return wc_string_to_datetime( gmdate( 'Y-m-d\TH:i:s\Z', $timestamp ) );
	}

	/** MM-YY (the card gateway's exp_date) as MM/YY; '' when it is not that. */
	private static function card_expiry( $value ) {
		return is_string( $value ) && preg_match( '/^(\d{2})[-\/](\d{2})$/', trim( $value ), $parts ) ? $parts[1] . '/' . $parts[2] : '';
	}

	/** The last four digits of a masked card number ('457111XXXXXX1234'); '' when there are none. */
	private static function last4( $value ) {
		return is_string( $value ) && preg_match( '/(\d{4})\s*$/', $value, $parts ) ? $parts[1] : '';
	}
}
