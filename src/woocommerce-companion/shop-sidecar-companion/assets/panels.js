/**
 * Shop Sidecar staff panels (Support on subscriptions, Payments on orders), written with WordPress's own
 * packages from the page: wp.element, wp.components, wp.apiFetch, wp.i18n, wp.a11y. No build step.
 *
 * Every call goes to the service through apiFetch with the logged-in cookie and the page's wp_rest nonce; a
 * stale nonce is answered 403 rest_cookie_invalid_nonce, and apiFetch fetches a fresh one and tries again. A
 * panel shows what the service answered, never a guess: after each action it draws the answer, and when the
 * service refuses or cannot be reached it says so and changes nothing on the screen. Every result and error is a
 * wp.components Notice, which announces itself to screen readers (wp.a11y.speak: polite for results, assertive for
 * errors).
 *
 * The service speaks in codes (card_gateway, FAILED, insufficient_funds, invoice_failed); staff read words. Every
 * code the panels show goes through one table (words() below) to a short label and, where it helps, a one-line
 * explanation, in the user's language; the code itself stays visible only as a small detail (<code>, or a title),
 * for support cases with the provider. Money and time are shown as the shop shows them on the same screen:
 * WooCommerce's price format, the shop's time zone (whatever the browser's), the user's locale.
 */
( function ( wp ) {
	'use strict';

	const { createElement: el, Fragment, render, useState, useEffect, useRef } = wp.element;
	const { Button, Notice, CheckboxControl, SelectControl, TextControl, Spinner } = wp.components;
	const { __, _n, sprintf } = wp.i18n;
	const apiFetch = wp.apiFetch;

	/* ---------------------------------------------------------------- Words: one table for every code shown */

	let vocabulary = null;

	/**
	 * The table: for each kind of code, its words. `label` is short; `explain` says in one line what it means for
	 * staff and the customer. Built once, after the page's translations are loaded.
	 */
	function words() {
		if ( vocabulary ) {
			return vocabulary;
		}
		const onlyCustomer = __( 'Only the customer can fix this, by giving another payment method.', 'shop-sidecar-companion' );
		const mayPassLater = __( 'It may go through later.', 'shop-sidecar-companion' );
		const triedSoon = __( 'Not the card\'s fault. It is tried again soon.', 'shop-sidecar-companion' );
		const inTheApp = __( 'The customer can fix this in the MobilePay app; the same agreement is charged again.', 'shop-sidecar-companion' );
		const technical = { label: __( 'Technical error between the provider and the bank', 'shop-sidecar-companion' ), explain: triedSoon };
		vocabulary = {
			provider: {
				card_gateway: { label: __( 'Card (Frisbii)', 'shop-sidecar-companion' ) },
				mobile_wallet: { label: __( 'MobilePay', 'shop-sidecar-companion' ) },
			},
			// A payment's, a charge's or an agreement's status, as the service or a provider names it (any case).
			status: {
				created: { label: __( 'Created', 'shop-sidecar-companion' ) },
				pending: { label: __( 'Waiting', 'shop-sidecar-companion' ), explain: __( 'The provider has not finished with it yet.', 'shop-sidecar-companion' ) },
				due: { label: __( 'Due', 'shop-sidecar-companion' ), explain: __( 'MobilePay takes it on its due date.', 'shop-sidecar-companion' ) },
				processing: { label: __( 'Being processed', 'shop-sidecar-companion' ) },
				authorized: { label: __( 'Reserved', 'shop-sidecar-companion' ), explain: __( 'The money is reserved, not taken yet.', 'shop-sidecar-companion' ) },
				reserved: { label: __( 'Reserved', 'shop-sidecar-companion' ), explain: __( 'The money is reserved, not taken yet.', 'shop-sidecar-companion' ) },
				captured: { label: __( 'Paid', 'shop-sidecar-companion' ) },
				settled: { label: __( 'Paid', 'shop-sidecar-companion' ) },
				charged: { label: __( 'Paid', 'shop-sidecar-companion' ) },
				partially_captured: { label: __( 'Partly paid', 'shop-sidecar-companion' ) },
				failed: { label: __( 'Failed', 'shop-sidecar-companion' ) },
				canceled: { label: __( 'Cancelled', 'shop-sidecar-companion' ) },
				cancelled: { label: __( 'Cancelled', 'shop-sidecar-companion' ) },
				refunded: { label: __( 'Refunded', 'shop-sidecar-companion' ) },
				partially_refunded: { label: __( 'Partly refunded', 'shop-sidecar-companion' ) },
				processed: { label: __( 'Handled', 'shop-sidecar-companion' ) },
				active: { label: __( 'Active', 'shop-sidecar-companion' ) },
				stopped: { label: __( 'Stopped', 'shop-sidecar-companion' ) },
				expired: { label: __( 'Expired', 'shop-sidecar-companion' ) },
			},
			// A dunning attempt's status (the service's retries).
			attemptStatus: {
				pending: { label: __( 'Planned', 'shop-sidecar-companion' ) },
				processing: { label: __( 'Being made now', 'shop-sidecar-companion' ) },
				succeeded: { label: __( 'Went through', 'shop-sidecar-companion' ) },
				failed: { label: __( 'Declined', 'shop-sidecar-companion' ) },
				canceled: { label: __( 'Not needed any more', 'shop-sidecar-companion' ) },
			},
			// What the service did with a provider's message.
			webhookStatus: {
				pending: { label: __( 'Not handled yet', 'shop-sidecar-companion' ) },
				processed: { label: __( 'Handled', 'shop-sidecar-companion' ) },
				skipped: { label: __( 'Nothing to do', 'shop-sidecar-companion' ), explain: __( 'It changed nothing here (already known, or not about this shop).', 'shop-sidecar-companion' ) },
				failed: { label: __( 'Could not be handled', 'shop-sidecar-companion' ), explain: __( 'The service tries again; if it stays like this, tell whoever runs the service.', 'shop-sidecar-companion' ) },
			},
			// Why a payment was declined: the card gateway's error codes and error states, the wallet's failure reasons.
			decline: {
				insufficient_funds: { label: __( 'Declined: not enough money', 'shop-sidecar-companion' ), explain: mayPassLater },
				settle_blocked: { label: __( 'Declined: the bank blocked the payment for now', 'shop-sidecar-companion' ), explain: mayPassLater },
				credit_card_expired: { label: __( 'The card has expired', 'shop-sidecar-companion' ), explain: onlyCustomer },
				declined_by_acquirer: { label: __( 'Declined by the card\'s bank', 'shop-sidecar-companion' ), explain: onlyCustomer },
				credit_card_lost_or_stolen: { label: __( 'The card was reported lost or stolen', 'shop-sidecar-companion' ), explain: onlyCustomer },
				credit_card_suspected_fraud: { label: __( 'The bank suspects fraud on the card', 'shop-sidecar-companion' ), explain: onlyCustomer },
				authorization_expired: { label: __( 'The reservation on the card expired', 'shop-sidecar-companion' ), explain: onlyCustomer },
				authorization_amount_exceeded: { label: __( 'More than the reserved amount was asked for', 'shop-sidecar-companion' ), explain: onlyCustomer },
				authorization_voided: { label: __( 'The reservation on the card was cancelled', 'shop-sidecar-companion' ), explain: onlyCustomer },
				sca_required: { label: __( 'The bank wants the customer to confirm the payment', 'shop-sidecar-companion' ), explain: onlyCustomer },
				risk_filter_block: { label: __( 'Stopped by the provider\'s fraud filter', 'shop-sidecar-companion' ), explain: onlyCustomer },
				fraud_block: { label: __( 'Blocked as suspected fraud', 'shop-sidecar-companion' ), explain: onlyCustomer },
				emv_token_deleted: { label: __( 'The stored card was deleted by the card scheme', 'shop-sidecar-companion' ), explain: onlyCustomer },
				emv_token_suspended: { label: __( 'The stored card is suspended by the card scheme', 'shop-sidecar-companion' ), explain: onlyCustomer },
				acquirer_communication_error: technical,
				acquirer_error: technical,
				acquirer_integration_error: technical,
				acquirer_authentication_error: technical,
				acquirer_configuration_error: technical,
				acquirer_rejected_error: technical,
				147: { label: __( 'The stored card no longer works', 'shop-sidecar-companion' ), explain: onlyCustomer },
				payment_method_failed: { label: __( 'The stored card no longer works', 'shop-sidecar-companion' ), explain: onlyCustomer },
				soft_declined: { label: __( 'Declined for now', 'shop-sidecar-companion' ), explain: mayPassLater },
				hard_declined: { label: __( 'Declined for good', 'shop-sidecar-companion' ), explain: __( 'Charging this card again will not help. Only the customer can fix this.', 'shop-sidecar-companion' ) },
				processing_error: technical,
				user_action_required: { label: __( 'The customer must act in the MobilePay app', 'shop-sidecar-companion' ), explain: inTheApp },
				charge_amount_too_high: { label: __( 'Above the agreement\'s maximum amount', 'shop-sidecar-companion' ), explain: __( 'The customer can raise the maximum in the MobilePay app; the same agreement is charged again.', 'shop-sidecar-companion' ) },
				non_technical_error: { label: __( 'Declined by MobilePay', 'shop-sidecar-companion' ), explain: inTheApp },
				no_agreement: { label: __( 'No MobilePay agreement to charge', 'shop-sidecar-companion' ), explain: onlyCustomer },
				technical_error: { label: __( 'Technical error at MobilePay', 'shop-sidecar-companion' ), explain: __( 'It is tried again soon.', 'shop-sidecar-companion' ) },
				unknown: { label: __( 'Declined without a reason', 'shop-sidecar-companion' ), explain: mayPassLater },
			},
			// The providers' messages (webhooks), as the card gateway and the wallet name them.
			event: {
				invoice_created: { label: __( 'Invoice created', 'shop-sidecar-companion' ) },
				invoice_authorized: { label: __( 'Money reserved', 'shop-sidecar-companion' ) },
				invoice_settled: { label: __( 'Payment taken', 'shop-sidecar-companion' ) },
				invoice_failed: { label: __( 'Payment failed', 'shop-sidecar-companion' ) },
				invoice_cancelled: { label: __( 'Invoice cancelled', 'shop-sidecar-companion' ) },
				invoice_refund: { label: __( 'Refunded', 'shop-sidecar-companion' ) },
				invoice_refund_failed: { label: __( 'Refund failed', 'shop-sidecar-companion' ) },
				invoice_reactivate: { label: __( 'Invoice reopened', 'shop-sidecar-companion' ) },
				customer_payment_method_added: { label: __( 'Card added', 'shop-sidecar-companion' ) },
				customer_payment_method_deleted: { label: __( 'Card removed', 'shop-sidecar-companion' ) },
				customer_payment_method_failed: { label: __( 'Card stopped working', 'shop-sidecar-companion' ) },
				customer_payment_method_reactivated: { label: __( 'Card works again', 'shop-sidecar-companion' ) },
				customer_changed: { label: __( 'Customer details changed', 'shop-sidecar-companion' ) },
				'recurring.charge-reserved.v1': { label: __( 'Money reserved', 'shop-sidecar-companion' ) },
				'recurring.charge-captured.v1': { label: __( 'Payment taken', 'shop-sidecar-companion' ) },
				'recurring.charge-failed.v1': { label: __( 'Payment failed', 'shop-sidecar-companion' ) },
				'recurring.charge-canceled.v1': { label: __( 'Charge cancelled', 'shop-sidecar-companion' ) },
				'recurring.charge-refunded.v1': { label: __( 'Refunded', 'shop-sidecar-companion' ) },
				'recurring.charge-creation-failed.v1': { label: __( 'The charge could not be created', 'shop-sidecar-companion' ) },
				'recurring.agreement-activated.v1': { label: __( 'Agreement accepted', 'shop-sidecar-companion' ) },
				'recurring.agreement-rejected.v1': { label: __( 'Agreement rejected', 'shop-sidecar-companion' ) },
				'recurring.agreement-stopped.v1': { label: __( 'Agreement stopped', 'shop-sidecar-companion' ) },
				'recurring.agreement-expired.v1': { label: __( 'Agreement expired', 'shop-sidecar-companion' ) },
			},
			// What asking the provider came to, per payment.
			outcome: {
				unchanged: { label: __( 'Nothing new', 'shop-sidecar-companion' ) },
				would_change: { label: __( 'Would change', 'shop-sidecar-companion' ) },
				changed: { label: __( 'Updated here', 'shop-sidecar-companion' ) },
				unreachable: { label: __( 'Could not be asked', 'shop-sidecar-companion' ), explain: __( 'Nothing was changed. Try again in a minute.', 'shop-sidecar-companion' ) },
			},
			// A failed renewal's case.
			caseStatus: {
				open: { label: __( 'Being collected', 'shop-sidecar-companion' ) },
				recovered: { label: __( 'Recovered', 'shop-sidecar-companion' ) },
				lost: { label: __( 'Lost', 'shop-sidecar-companion' ) },
			},
			// How a failed renewal was recovered.
			means: {
				service_retry: { label: __( 'A planned attempt went through.', 'shop-sidecar-companion' ) },
				staff_charge: { label: __( 'A charge a staff member asked for went through.', 'shop-sidecar-companion' ) },
				new_payment_method: { label: __( 'The customer gave a new payment method.', 'shop-sidecar-companion' ) },
				provider_retry: { label: __( 'MobilePay\'s own retry went through.', 'shop-sidecar-companion' ) },
				reconciliation: { label: __( 'The provider reported it paid when asked.', 'shop-sidecar-companion' ) },
				shop_payment: { label: __( 'It was paid in the shop.', 'shop-sidecar-companion' ) },
			},
			// Why an action (or an attempt) is not possible now.
			refusal: {
				case_closed: { label: __( 'The failed renewal is already settled.', 'shop-sidecar-companion' ) },
				daily_cap: { label: __( 'This payment method has been charged as often today as the card schemes allow.', 'shop-sidecar-companion' ) },
				monthly_cap: { label: __( 'This payment method has been charged as often in 30 days as the card schemes allow.', 'shop-sidecar-companion' ) },
				wallet_charge_under_way: { label: __( 'MobilePay is still trying to take this payment itself.', 'shop-sidecar-companion' ) },
				charge_under_way: { label: __( 'A charge is already under way.', 'shop-sidecar-companion' ) },
				no_payment_method: { label: __( 'The subscription has no stored payment method to charge.', 'shop-sidecar-companion' ) },
				provider_not_configured: { label: __( 'The payment provider is not set up in the service.', 'shop-sidecar-companion' ) },
				provider_unreachable: { label: __( 'The payment provider could not be asked right now.', 'shop-sidecar-companion' ) },
				provider_refused_request: { label: __( 'The payment provider refused the service\'s request. Whoever runs the service has been told.', 'shop-sidecar-companion' ) },
				order_not_awaiting_payment: { label: __( 'The renewal order no longer awaits payment.', 'shop-sidecar-companion' ) },
				subscription_not_on_hold: { label: __( 'The subscription is not on hold; only a held subscription\'s renewal is charged again.', 'shop-sidecar-companion' ) },
				companion_required: { label: __( 'Sending it through WooCommerce needs the companion plugin, version 3 or newer.', 'shop-sidecar-companion' ) },
				link_just_sent: { label: __( 'The customer was sent the link only minutes ago.', 'shop-sidecar-companion' ) },
				charge_just_made: { label: __( 'The renewal was charged by staff less than a minute ago.', 'shop-sidecar-companion' ) },
				no_dunning_case: { label: __( 'The order has no failed renewal being followed up.', 'shop-sidecar-companion' ) },
			},
		};
		return vocabulary;
	}

	/** The words for `code` in table `kind` (the status tables in any case); null for a code the table does not know. */
	function wordFor( kind, code ) {
		if ( code === null || code === undefined || code === '' ) {
			return null;
		}
		const table = words()[ kind ];
		const key = String( code );
		return table[ key ] || table[ key.toLowerCase() ] || null;
	}

	/** A label and, when there is one, its explanation, as one sentence pair. */
	function labelled( word, withExplanation ) {
		return withExplanation && word.explain ? [ word.label + '.', ' ', el( 'span', { key: 'explain', className: 'shop-sidecar-explain' }, word.explain ) ] : word.label;
	}

	/**
	 * A code in words; an unknown code as a generic sentence. The code itself is a detail: shown small (`<code>`)
	 * where staff may need it with the provider (`showCode`), else in the title only.
	 */
	function Worded( { kind, code, fallback, explain, showCode, className } ) {
		if ( code === null || code === undefined || code === '' ) {
			return el( 'span', { className }, '—' );
		}
		const word = wordFor( kind, code );
		const known = !! word;
		return el(
			'span',
			{ className, 'data-code': code, title: code },
			known ? labelled( word, explain ) : ( fallback || __( 'Something the panel has no words for', 'shop-sidecar-companion' ) ),
			showCode || ! known ? [ ' ', el( 'code', { key: 'code', className: 'shop-sidecar-code' }, code ) ] : null
		);
	}

	/** A decline's words: its code when the table knows it, else its state, else a generic one. */
	function declineWord( code, state ) {
		return wordFor( 'decline', code ) || wordFor( 'decline', state ) || null;
	}

	function Decline( { code, state, className } ) {
		const codes = [ code, state ].filter( Boolean );
		const word = declineWord( code, state ) || wordFor( 'refusal', code );
		return el(
			'span',
			{ className: className || 'shop-sidecar-decline' },
			word ? labelled( word, true ) : __( 'Declined for a reason the panel has no words for', 'shop-sidecar-companion' ),
			codes.length ? [ ' ', el( 'code', { key: 'code', className: 'shop-sidecar-code' }, codes.join( ' · ' ) ) ] : null
		);
	}

	/* ---------------------------------------------------------------- Money and time, as the shop shows them */

	/**
	 * Formats of one screen, from the shop's settings the page passes (includes/admin-panels.php,
	 * shop_sidecar_shop_formats): WooCommerce's price format, the shop's time zone, the user's locale.
	 */
	function formats( shop ) {
		shop = shop || {};
		const locale = shop.locale || document.documentElement.lang || undefined;
		const offset = Number( shop.offsetMinutes ) || 0;
		// A zone name goes to Intl, which knows its summer time; a fixed offset (+02:00) is applied by hand.
		let zone = shop.timeZone && ! /^[+-]\d{2}:?\d{2}$/.test( shop.timeZone ) ? shop.timeZone : null;
		if ( zone ) {
			try {
				new Intl.DateTimeFormat( 'en', { timeZone: zone } ); // eslint-disable-line no-new
			} catch ( error ) {
				zone = null; // a zone this browser does not know: the shop's offset now
			}
		}
		const moment = ( value ) => {
			const at = value ? Date.parse( value ) : NaN;
			if ( Number.isNaN( at ) ) {
				return null;
			}
			return zone ? new Date( at ) : new Date( at + offset * 60000 );
		};
		const intl = ( options ) => new Intl.DateTimeFormat( locale, Object.assign( { timeZone: zone || 'UTC' }, options ) );
		const parts = ( at ) => {
			const found = {};
			new Intl.DateTimeFormat( 'en-GB', { timeZone: zone || 'UTC', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } )
				.formatToParts( at ).forEach( ( part ) => {
					found[ part.type ] = part.value;
				} );
			return found;
		};
		const minorDigits = ( currency ) => {
			try {
				return new Intl.NumberFormat( 'en', { style: 'currency', currency } ).resolvedOptions().maximumFractionDigits;
			} catch ( error ) {
				return 2;
			}
		};
		const self = {
			locale,
			/** `YYYY-MM-DD HH:MM` in the shop's time, for data-shop-time (and the tests). */
			stamp( value ) {
				const at = moment( value );
				if ( ! at ) {
					return '';
				}
				const p = parts( at );
				return p.year + '-' + p.month + '-' + p.day + ' ' + p.hour + ':' + p.minute;
			},
			/** A day and time in a sentence ("28 November at 22:51"; the year when it is not this one). */
			long( value ) {
				const at = moment( value );
				if ( ! at ) {
					return '—';
				}
				const thisYear = parts( moment( new Date().toISOString() ) ).year === parts( at ).year;
				return intl( { day: 'numeric', month: 'long', year: thisYear ? undefined : 'numeric', hour: 'numeric', minute: '2-digit' } ).format( at );
			},
			/** A day in a sentence ("28 November 2025"). */
			day( value ) {
				const at = moment( value );
				return at ? intl( { day: 'numeric', month: 'long', year: 'numeric' } ).format( at ) : '—';
			},
			/** A moment in a table cell ("28 Nov 2025, 22:51"). */
			short( value ) {
				const at = moment( value );
				return at ? intl( { dateStyle: 'medium', timeStyle: 'short' } ).format( at ) : '—';
			},
			/** An amount in minor units (as the providers and the service count money). */
			money( minor, currency ) {
				if ( minor === null || minor === undefined || minor === '' ) {
					return '—';
				}
				return self.price( Number( minor ) / Math.pow( 10, minorDigits( currency || shop.currency ) ), currency );
			},
			/** An amount in the currency's units, as WooCommerce's wc_price() writes it on this screen. */
			price( amount, currency ) {
				amount = Number( amount );
				if ( Number.isNaN( amount ) ) {
					return '—';
				}
				if ( ! shop.currencySymbol || ( currency && shop.currency && currency !== shop.currency ) ) {
					try {
						return new Intl.NumberFormat( locale, { style: 'currency', currency: currency || shop.currency } ).format( amount );
					} catch ( error ) {
						return amount + ' ' + ( currency || '' );
					}
				}
				const decimals = Math.max( 0, Number( shop.decimals ) || 0 );
				const [ whole, fraction ] = Math.abs( amount ).toFixed( decimals ).split( '.' );
				const number = whole.replace( /\B(?=(\d{3})+(?!\d))/g, shop.thousandSeparator || '' ) + ( decimals > 0 ? ( shop.decimalSeparator || '.' ) + fraction : '' );
				const symbol = shop.currencySymbol;
				const shown = {
					left: symbol + number,
					right: number + symbol,
					left_space: symbol + '\u00a0' + number,
					right_space: number + '\u00a0' + symbol,
				}[ shop.currencyPosition ] || symbol + number;
				return ( amount < 0 ? '-' : '' ) + shown;
			},
			/** A share in per cent (25 → "25 %" in Danish, "25%" in English). */
			percent( value ) {
				const share = Number( value );
				return Number.isNaN( share ) ? '—' : new Intl.NumberFormat( locale, { style: 'percent', maximumFractionDigits: 2 } ).format( share / 100 );
			},
		};
		return self;
	}

	/** A moment as a <time>, its shop-time stamp in data-shop-time. */
	function When( { fmt, value, style, className } ) {
		if ( ! value ) {
			return el( 'span', { className }, '—' );
		}
		return el( 'time', { className, dateTime: value, 'data-shop-time': fmt.stamp( value ) }, fmt[ style || 'short' ]( value ) );
	}

	/** An answer or refusal of the service, as a sentence a shop manager understands. */
	function explain( error, fmt ) {
		const status = error && error.data && error.data.status;
		const code = error && error.code;
		if ( code === 'fetch_error' || code === 'invalid_json' || status === 502 || status === 503 || status === 504 ) {
			return __( 'The payment service cannot be reached right now. Nothing was changed. Try again in a minute; if it keeps failing, tell whoever runs the service.', 'shop-sidecar-companion' );
		}
		if ( status === 401 || code === 'rest_cookie_invalid_nonce' ) {
			return __( 'Your login could not be confirmed. Reload the page, log in again if asked, and try again.', 'shop-sidecar-companion' );
		}
		if ( status === 403 ) {
			return __( 'Your user is not allowed to do this.', 'shop-sidecar-companion' );
		}
		if ( status === 429 ) {
			return __( 'Too many attempts in a short time. Wait a minute and try again.', 'shop-sidecar-companion' );
		}
		if ( code === 'action_not_allowed' ) {
			return el( Fragment, null, __( 'Nothing was done:', 'shop-sidecar-companion' ), ' ', el( Refusal, { fmt, reason: error.data.reason, notBefore: error.data.not_before } ) );
		}
		if ( status === 409 || status === 400 || status === 404 ) {
			/* translators: %s: the service's explanation, in English. */
			return sprintf( __( 'Nothing was changed: %s', 'shop-sidecar-companion' ), ( error && error.message ) || code );
		}
		/* translators: %s: the service's explanation, in English. */
		return sprintf( __( 'The payment service could not do this: %s', 'shop-sidecar-companion' ), ( error && error.message ) || __( 'unknown error', 'shop-sidecar-companion' ) );
	}

	/** Why an action is not possible now, and from when it is, in words; the reason's code as a detail. */
	function Refusal( { fmt, reason, notBefore } ) {
		const word = wordFor( 'refusal', reason );
		return el(
			'span',
			{ className: 'shop-sidecar-refusal', 'data-reason': reason || '' },
			word ? word.label : __( 'This is not possible right now.', 'shop-sidecar-companion' ),
			notBefore ? [ ' ', el( 'span', { key: 'when' }, sprintf( /* translators: %s: a day and time in the shop's time zone. */ __( 'Possible again from %s.', 'shop-sidecar-companion' ), fmt.long( notBefore ) ) ) ] : null,
			reason ? [ ' ', el( 'code', { key: 'code', className: 'shop-sidecar-code' }, reason ) ] : null
		);
	}

	/** apiFetch against the service's routes on this origin. */
	function service( root, path, options ) {
		return apiFetch( Object.assign( { url: root + path.replace( /^\//, '' ) }, options || {} ) );
	}

	/**
	 * One action at a time per panel: a second click while one is on its way does nothing, so a double click
	 * records nothing twice. `run` returns whether the action succeeded. `done` returns the result's words (a
	 * success), or `{ status, message }`; `failed` may look at a refusal before it is shown.
	 */
	function useActions( fmt ) {
		const [ busy, setBusy ] = useState( null );
		const [ notice, setNotice ] = useState( null );
		const inFlight = useRef( false );
		async function run( name, work, done, failed ) {
			if ( inFlight.current ) {
				return false;
			}
			inFlight.current = true;
			setBusy( name );
			setNotice( null );
			try {
				const answer = await work();
				const message = done( answer );
				if ( message ) {
					setNotice( message.message ? message : { status: 'success', message } );
				}
				return true;
			} catch ( error ) {
				setNotice( { status: 'error', message: explain( error, fmt ) } );
				if ( failed ) {
					failed( error );
				}
				return false;
			} finally {
				inFlight.current = false;
				setBusy( null );
			}
		}
		return { busy, notice, setNotice, run };
	}

	function NoticeLine( { notice, onRemove } ) {
		if ( ! notice ) {
			return null;
		}
		return el( Notice, { status: notice.status, isDismissible: true, onRemove, className: 'shop-sidecar-notice' }, notice.message );
	}

	/** The panels sit inside WP admin's edit form: Enter in one of their fields must not save the whole order. */
	const keepEnter = ( event ) => {
		if ( event.key === 'Enter' ) {
			event.preventDefault();
		}
	};

	/** A table with its title (a visible caption unless `hiddenCaption`); `empty` instead when it has no rows. */
	function Table( { caption, hiddenCaption, columns, rows, empty, className } ) {
		if ( ! rows.length ) {
			return el( 'p', { className: 'shop-sidecar-empty' }, empty );
		}
		return el(
			'table',
			{ className: 'widefat striped shop-sidecar-table ' + ( className || '' ) },
			el( 'caption', { className: hiddenCaption ? 'screen-reader-text' : 'shop-sidecar-caption' }, caption ),
			el( 'thead', null, el( 'tr', null, columns.map( ( column ) => el( 'th', { key: column.title, scope: 'col' }, column.title ) ) ) ),
			el(
				'tbody',
				null,
				rows.map( ( row, index ) => el( 'tr', { key: row.id || index }, columns.map( ( column ) => el( 'td', { key: column.title }, column.cell( row ) ) ) ) )
			)
		);
	}

	function Section( { title, children, className } ) {
		return el( 'div', { className: 'shop-sidecar-section ' + ( className || '' ) }, title ? el( 'h4', null, title ) : null, children );
	}

	/* ---------------------------------------------------------------- WooCommerce's own boxes on the same screen */

	/**
	 * WooCommerce's own boxes on an edit screen are drawn with the page, and WooCommerce's Update posts every field
	 * in them: left as drawn after a panel action, they would save the old state back. On a subscription: Subscription
	 * Data's status select, Schedule's dates; on an order: Order Data's status select and transaction ID; on both,
	 * the notes. So after each action they are filled with the new state, at once from the service's answer where
	 * it says it, and then, once WooCommerce has applied the change, with WooCommerce's own values and notes. A field
	 * the staff member changed themselves is left as they set it: that edit is theirs to save. The value each field
	 * was last filled with is in the hidden input shop_sidecar_drawn[<field>], which the companion also compares on
	 * Update (includes/admin-panels.php).
	 */
	const boxes = {
		drawn( name ) {
			return document.querySelector( 'input[name="shop_sidecar_drawn[' + name + ']"]' );
		},
		field( name ) {
			return document.querySelector( 'form [name="' + name + '"]' );
		},
		/** Fills one field; false when the staff member had changed it (it keeps their value). */
		fill( name, value, choices ) {
			const field = boxes.field( name );
			const drawn = boxes.drawn( name );
			if ( ! field || ! drawn || value === null || value === undefined ) {
				return true;
			}
			value = String( value );
			if ( field.value !== drawn.value && field.value !== value ) {
				return false;
			}
			if ( field.tagName === 'SELECT' ) {
				if ( choices && choices.length ) {
					field.replaceChildren( ...choices.map( ( choice ) => new Option( choice.label, choice.value ) ) );
				}
				if ( ! Array.from( field.options ).some( ( option ) => option.value === value ) ) {
					field.add( new Option( value, value ) );
				}
			}
			field.value = value;
			drawn.value = value;
			if ( /_timestamp_utc$/.test( name ) ) {
				boxes.showDate( name.replace( /_timestamp_utc$/, '' ), Number( value ) );
			}
			if ( field.tagName === 'SELECT' && window.jQuery ) {
				// selectWoo draws the select anew; no other handler hears a change the staff member did not make.
				window.jQuery( field ).trigger( 'change.select2' );
			}
			return true;
		},
		/** Schedule's visible date, hour and minute of a date, in the browser's time, as Subscriptions' own script fills them. */
		showDate( type, seconds ) {
			const date = document.getElementById( type );
			const hour = document.getElementById( type + '_hour' );
			const minute = document.getElementById( type + '_minute' );
			const at = seconds > 0 ? new Date( seconds * 1000 ) : null;
			const pad = ( number ) => String( number ).padStart( 2, '0' );
			if ( date ) {
				date.value = at ? at.getFullYear() + '-' + pad( at.getMonth() + 1 ) + '-' + pad( at.getDate() ) : '';
			}
			if ( hour ) {
				hour.value = at ? pad( at.getHours() ) : '';
			}
			if ( minute ) {
				minute.value = at ? pad( at.getMinutes() ) : '';
			}
		},
		/** The notes list, as WooCommerce's notes box draws it. */
		notes( html ) {
			const list = document.querySelector( '#woocommerce-order-notes ul.order_notes' );
			const fresh = typeof html === 'string' ? new DOMParser().parseFromString( html, 'text/html' ).querySelector( 'ul.order_notes' ) : null;
			if ( list && fresh ) {
				list.innerHTML = fresh.innerHTML;
			}
		},
	};

	const sleep = ( ms ) => new Promise( ( resolve ) => setTimeout( resolve, ms ) );
	const seconds = ( moment ) => ( moment ? String( Math.round( Date.parse( moment ) / 1000 ) ) : '0' );

	/**
	 * follow( fields ) after an action: WooCommerce's boxes show `fields` (what the answer says) at once, then
	 * WooCommerce's own state as soon as it has applied the change (the companion's edit-screen route at
	 * `screenPath`, asked every few seconds, for up to ten minutes); `applied` gets that state. `notice` says when a
	 * field kept the staff member's own edit, or when WooCommerce is slow to apply.
	 */
	function useWooCommerceBoxes( screenPath, applied ) {
		const [ notice, setNotice ] = useState( null );
		const following = useRef( 0 );
		useEffect( () => () => {
			following.current += 1;
		}, [] );

		async function follow( fields ) {
			const mine = ++following.current;
			let kept = false;
			const fill = ( values, choices ) => {
				Object.keys( values ).forEach( ( name ) => {
					kept = ! boxes.fill( name, values[ name ], name === 'order_status' ? choices : null ) || kept;
				} );
			};
			const keptNotice = { status: 'warning', message: __( 'You had changed the status or a date in WooCommerce\'s boxes on this page before this action. They still show your change, and Update will save it instead.', 'shop-sidecar-companion' ) };
			fill( fields || {} );
			setNotice( kept ? keptNotice : null );
			const started = Date.now();
			for ( let wait = 400; Date.now() - started < 10 * 60 * 1000; wait = Math.min( wait * 2, 10000 ) ) {
				await sleep( wait );
				if ( mine !== following.current ) {
					return;
				}
				let screen = null;
				try {
					screen = await apiFetch( { path: screenPath } );
				} catch ( error ) {
					screen = null; // asked again
				}
				if ( mine !== following.current ) {
					return;
				}
				if ( screen && ! screen.waiting ) {
					fill( screen.fields, screen.status_options );
					boxes.notes( screen.notes_html );
					if ( applied ) {
						applied( screen );
					}
					setNotice( kept ? keptNotice : null );
					return;
				}
				if ( ! kept && Date.now() - started > 15000 ) {
					setNotice( { status: 'info', message: __( 'WooCommerce has not applied this change yet. The boxes on this page already show it, so Update is safe; the notes follow once it is applied.', 'shop-sidecar-companion' ) } );
				}
			}
		}
		return { notice, setNotice, follow };
	}

	/* ---------------------------------------------------------------- Support (subscription edit screen) */

	function SupportPanel( { settings } ) {
		const root = settings.apiRoot;
		const id = settings.subscriptionId;
		const [ state, setState ] = useState( { status: settings.status, next_payment_date: settings.nextPayment, auto_reactivation_date: settings.pauseEnd } );
		const [ loaded, setLoaded ] = useState( null );
		const [ loadError, setLoadError ] = useState( null );
		const [ chosen, setChosen ] = useState( [] );
		const [ pauseEnd, setPauseEnd ] = useState( settings.earliestPauseEnd );
		const [ discountType, setDiscountType ] = useState( '' );
		const [ amount, setAmount ] = useState( '' );
		const fmt = formats( settings.shop );
		const actions = useActions( fmt );
		const wooBoxes = useWooCommerceBoxes( 'shop-sidecar/v1/subscriptions/' + id + '/edit-screen', ( screen ) => setState( { status: screen.status, next_payment_date: screen.next_payment, auto_reactivation_date: screen.pause_end } ) );
		const boxFields = ( answer ) => ( { order_status: 'wc-' + answer.status, next_payment_timestamp_utc: seconds( answer.next_payment_date ) } );

		async function load() {
			setLoadError( null );
			try {
				const [ reasons, recorded, types, discounts ] = await Promise.all( [
					service( root, 'subscription-support/v1/cancellation-reasons' ),
					service( root, 'subscription-support/v1/subscription/' + id + '/cancellation-reasons' ),
					settings.canManageDiscounts ? service( root, 'renewal-discounts/v1/renewal-discount-types' ) : Promise.resolve( [] ),
					settings.canManageDiscounts ? service( root, 'renewal-discounts/v1/discounts?subscription=' + id + '&per_page=100' ) : Promise.resolve( [] ),
				] );
				setLoaded( { reasons, recorded, types, discounts } );
				if ( types.length && ! discountType ) {
					setDiscountType( String( types[ 0 ].id ) );
				}
			} catch ( error ) {
				setLoadError( explain( error, fmt ) );
			}
		}
		useEffect( () => {
			load();
		}, [] );

		const label = ( status ) => ( settings.statusLabels && settings.statusLabels[ status ] ) || status;
		const pausable = [ 'active', 'pending', 'on-hold' ].includes( state.status );
		const onHold = state.status === 'on-hold';

		const pause = () => actions.run(
			'pause',
			() => service( root, 'subscription-support/v1/subscription/' + id + '/pause', { method: 'POST', data: { end_date: pauseEnd } } ),
			( answer ) => {
				setState( answer );
				wooBoxes.follow( boxFields( answer ) );
				/* translators: 1: pause end date, 2: next payment date. */
				return sprintf( __( 'Paused until %1$s. Next payment: %2$s.', 'shop-sidecar-companion' ), fmt.long( answer.auto_reactivation_date ), fmt.long( answer.next_payment_date ) );
			}
		);
		const forceActivate = () => actions.run(
			'activate',
			() => service( root, 'subscription-support/v1/subscription/' + id + '/force-activate', { method: 'POST' } ),
			( answer ) => {
				setState( answer );
				wooBoxes.follow( boxFields( answer ) );
				/* translators: %s: next payment date. */
				return sprintf( __( 'The subscription is active again. Next payment: %s.', 'shop-sidecar-companion' ), fmt.long( answer.next_payment_date ) );
			}
		);
		const record = () => actions.run(
			'record',
			() => service( root, 'subscription-support/v1/subscription/' + id + '/cancellation-reasons', { method: 'POST', data: { reason_post_ids: chosen.map( Number ) } } ),
			( entries ) => {
				setLoaded( ( before ) => Object.assign( {}, before, { recorded: before.recorded.concat( entries ) } ) );
				setChosen( [] );
				/* translators: %d: number of reasons recorded. */
				return sprintf( _n( 'Recorded %d cancellation reason.', 'Recorded %d cancellation reasons.', entries.length, 'shop-sidecar-companion' ), entries.length );
			}
		);
		const createDiscount = () => actions.run(
			'discount',
			() => service( root, 'renewal-discounts/v1/discounts', { method: 'POST', data: { subscription: id, type: Number( discountType ), amount, created_via: 'wp-admin' } } ),
			( discount ) => {
				setLoaded( ( before ) => Object.assign( {}, before, { discounts: [ discount ].concat( before.discounts ) } ) );
				setAmount( '' );
				/* translators: %s: the discount's amount (money or per cent). */
				return sprintf( __( 'Discount of %s created for the next renewal.', 'shop-sidecar-companion' ), amountOf( discount ) );
			}
		);
		const cancelDiscount = ( discount ) => actions.run(
			'cancel-' + discount.id,
			// apiFetch sends DELETE as POST with X-HTTP-Method-Override, which the service honours.
			() => service( root, 'renewal-discounts/v1/discounts/' + discount.id, { method: 'DELETE' } ),
			( cancelled ) => {
				setLoaded( ( before ) => Object.assign( {}, before, { discounts: before.discounts.map( ( one ) => ( one.id === cancelled.id ? cancelled : one ) ) } ) );
				/* translators: %d: discount ID. */
				return sprintf( __( 'Discount %d cancelled.', 'shop-sidecar-companion' ), cancelled.id );
			}
		);

		function unitOf( type ) {
			if ( ! type || ! type.scheme ) {
				return '';
			}
			return type.scheme.amount_type === 'percent' ? '%' : ( settings.shop && settings.shop.currencySymbol ) || settings.currency;
		}
		/** A discount's amount as the shop writes money (kr.25,00), or a share in the user's locale (25 %). */
		function amountOf( discount ) {
			if ( discount.type && discount.type.scheme && discount.type.scheme.amount_type === 'percent' ) {
				return fmt.percent( discount.amount );
			}
			return fmt.price( discount.amount, discount.currency );
		}
		const selectedType = loaded && loaded.types.find( ( type ) => String( type.id ) === discountType );

		const discountStatus = {
			pending: __( 'Pending', 'shop-sidecar-companion' ),
			applied: __( 'Applied', 'shop-sidecar-companion' ),
			cancelled: __( 'Cancelled', 'shop-sidecar-companion' ),
		};

		return el(
			Fragment,
			null,
			el( NoticeLine, { notice: actions.notice, onRemove: () => actions.setNotice( null ) } ),
			el( NoticeLine, { notice: wooBoxes.notice, onRemove: () => wooBoxes.setNotice( null ) } ),
			el(
				'dl',
				{ className: 'shop-sidecar-facts' },
				el( 'dt', null, __( 'Status', 'shop-sidecar-companion' ) ),
				el( 'dd', { 'data-field': 'status' }, label( state.status ) ),
				el( 'dt', null, __( 'Next payment', 'shop-sidecar-companion' ) ),
				el( 'dd', { 'data-field': 'next-payment' }, el( When, { fmt, value: state.next_payment_date, style: 'long' } ) ),
				el( 'dt', null, __( 'Paused until', 'shop-sidecar-companion' ) ),
				el( 'dd', { 'data-field': 'pause-end' }, el( When, { fmt, value: onHold ? state.auto_reactivation_date : null, style: 'long' } ) )
			),
			el(
				Section,
				{ title: __( 'Pause or activate', 'shop-sidecar-companion' ) },
				pausable
					? el(
						'div',
						{ className: 'shop-sidecar-row' },
						el( TextControl, {
							label: __( 'Pause until', 'shop-sidecar-companion' ),
							type: 'date',
							min: settings.earliestPauseEnd,
							value: pauseEnd,
							onChange: setPauseEnd,
							className: 'shop-sidecar-pause-end',
							onKeyDown: keepEnter,
							__nextHasNoMarginBottom: true,
						} ),
						el( Button, { variant: 'secondary', onClick: pause, isBusy: actions.busy === 'pause', disabled: !! actions.busy || ! pauseEnd, className: 'shop-sidecar-pause' }, __( 'Pause', 'shop-sidecar-companion' ) )
					)
					: el( 'p', null, sprintf( /* translators: %s: subscription status. */ __( 'A subscription that is %s cannot be paused.', 'shop-sidecar-companion' ), label( state.status ).toLowerCase() ) ),
				onHold && el( Button, { variant: 'primary', onClick: forceActivate, isBusy: actions.busy === 'activate', disabled: !! actions.busy, className: 'shop-sidecar-force-activate' }, __( 'Force-activate', 'shop-sidecar-companion' ) )
			),
			loadError && el( Notice, { status: 'error', isDismissible: false }, loadError, ' ', el( Button, { variant: 'link', onClick: load }, __( 'Try again', 'shop-sidecar-companion' ) ) ),
			! loaded && ! loadError && el( Spinner ),
			loaded && el(
				Section,
				{ title: __( 'Cancellation reasons', 'shop-sidecar-companion' ) },
				el( Table, {
					caption: __( 'Recorded cancellation reasons', 'shop-sidecar-companion' ),
					hiddenCaption: true,
					empty: __( 'No cancellation reason recorded.', 'shop-sidecar-companion' ),
					rows: loaded.recorded,
					columns: [
						{ title: __( 'Reason', 'shop-sidecar-companion' ), cell: ( entry ) => entry.title },
						// recorded_at carries its offset; date is the shop's local time without one, which a browser would read as its own.
						{ title: __( 'Recorded', 'shop-sidecar-companion' ), cell: ( entry ) => el( When, { fmt, value: entry.recorded_at || ( entry.date_gmt ? entry.date_gmt.replace( ' ', 'T' ) + 'Z' : null ) } ) },
					],
				} ),
				loaded.reasons.length
					? el(
						'fieldset',
						{ className: 'shop-sidecar-reasons' },
						el( 'legend', null, __( 'Record why the customer cancelled', 'shop-sidecar-companion' ) ),
						loaded.reasons.map( ( reason ) => el( CheckboxControl, {
							key: reason.id,
							label: reason.title,
							checked: chosen.includes( reason.id ),
							onChange: ( on ) => setChosen( ( before ) => ( on ? before.concat( [ reason.id ] ) : before.filter( ( one ) => one !== reason.id ) ) ),
							__nextHasNoMarginBottom: true,
						} ) ),
						el( Button, { variant: 'secondary', onClick: record, isBusy: actions.busy === 'record', disabled: !! actions.busy || ! chosen.length, className: 'shop-sidecar-record' }, __( 'Record reasons', 'shop-sidecar-companion' ) )
					)
					: el( 'p', null, __( 'No cancellation reasons are published.', 'shop-sidecar-companion' ) )
			),
			loaded && settings.canManageDiscounts && el(
				Section,
				{ title: __( 'Renewal discounts', 'shop-sidecar-companion' ) },
				el( Table, {
					caption: __( 'Renewal discounts', 'shop-sidecar-companion' ),
					hiddenCaption: true,
					empty: __( 'No renewal discounts.', 'shop-sidecar-companion' ),
					rows: loaded.discounts,
					columns: [
						{ title: __( 'Type', 'shop-sidecar-companion' ), cell: ( discount ) => ( discount.type ? discount.type.name : '—' ) },
						{ title: __( 'Amount', 'shop-sidecar-companion' ), cell: ( discount ) => amountOf( discount ) },
						{ title: __( 'Status', 'shop-sidecar-companion' ), cell: ( discount ) => el( 'span', { 'data-discount-status': discount.status }, discountStatus[ discount.status ] || discount.status ) },
						{
							title: __( 'Order', 'shop-sidecar-companion' ),
							cell: ( discount ) => ( discount.order ? el( 'a', { href: discount.order_edit_url }, '#' + discount.order ) : '—' ),
						},
						{
							title: __( 'Actions', 'shop-sidecar-companion' ),
							cell: ( discount ) => ( discount.status === 'pending'
								? el( Button, {
									variant: 'link',
									isDestructive: true,
									onClick: () => cancelDiscount( discount ),
									disabled: !! actions.busy,
									className: 'shop-sidecar-cancel-discount',
									'data-discount': discount.id,
								}, __( 'Cancel', 'shop-sidecar-companion' ) )
								: null ),
						},
					],
				} ),
				loaded.types.length
					? el(
						'div',
						{ className: 'shop-sidecar-row' },
						el( SelectControl, {
							label: __( 'Discount type', 'shop-sidecar-companion' ),
							value: discountType,
							options: loaded.types.map( ( type ) => ( { value: String( type.id ), label: type.name } ) ),
							onChange: setDiscountType,
							className: 'shop-sidecar-discount-type',
							__nextHasNoMarginBottom: true,
						} ),
						el( TextControl, {
							/* translators: %s: unit of the amount (currency code or %). */
							label: sprintf( __( 'Amount (%s)', 'shop-sidecar-companion' ), unitOf( selectedType ) ),
							type: 'number',
							min: 0,
							step: 'any',
							value: amount,
							onChange: setAmount,
							className: 'shop-sidecar-discount-amount',
							onKeyDown: keepEnter,
							__nextHasNoMarginBottom: true,
						} ),
						el( Button, { variant: 'secondary', onClick: createDiscount, isBusy: actions.busy === 'discount', disabled: !! actions.busy || ! amount, className: 'shop-sidecar-create-discount' }, __( 'Create discount', 'shop-sidecar-companion' ) )
					)
					: el( 'p', null, __( 'No discount types are set up.', 'shop-sidecar-companion' ) )
			)
		);
	}

	/* ---------------------------------------------------------------- Payments (order edit screen) */

	/** One line of a failed renewal's story (dunning.timeline), in words. */
	function storyLine( entry, dunning ) {
		const attempt = entry.attempt;
		const by = entry.by || __( 'A staff member', 'shop-sidecar-companion' );
		switch ( entry.event ) {
			case 'renewal_failed':
				return __( 'The renewal payment failed.', 'shop-sidecar-companion' );
			case 'attempt_planned':
				// awaiting: the attempt was made and its charge awaits the provider's answer (a wallet's, for days).
				if ( entry.awaiting ) {
					return entry.why === 'payday'
						/* translators: %d: the attempt's number. */
						? sprintf( __( 'Attempt %d was made early on payday, as the decline was for lack of funds; the provider has not answered yet.', 'shop-sidecar-companion' ), attempt )
						/* translators: %d: the attempt's number. */
						: sprintf( __( 'Attempt %d was made; the provider has not answered yet.', 'shop-sidecar-companion' ), attempt );
				}
				// why: 'payday': planned early on payday, the decline having been for lack of funds (DUNNING_PAYDAYS).
				if ( entry.why === 'payday' ) {
					return Date.parse( entry.at ) > Date.now()
						/* translators: %d: the attempt's number. */
						? sprintf( __( 'Attempt %d is planned for this time: early on payday, as the decline was for lack of funds.', 'shop-sidecar-companion' ), attempt )
						/* translators: %d: the attempt's number. */
						: sprintf( __( 'Attempt %d was due: early on payday, as the decline was for lack of funds.', 'shop-sidecar-companion' ), attempt );
				}
				return Date.parse( entry.at ) > Date.now()
					/* translators: %d: the attempt's number. */
					? sprintf( __( 'Attempt %d is planned for this time.', 'shop-sidecar-companion' ), attempt )
					/* translators: %d: the attempt's number. */
					: sprintf( __( 'Attempt %d was due.', 'shop-sidecar-companion' ), attempt );
			case 'attempt_succeeded':
				/* translators: %d: the attempt's number. */
				return sprintf( __( 'Attempt %d went through.', 'shop-sidecar-companion' ), attempt );
			case 'attempt_failed':
				/* translators: %d: the attempt's number. */
				return sprintf( __( 'Attempt %d was declined.', 'shop-sidecar-companion' ), attempt );
			case 'attempt_held':
				/* translators: %d: the attempt's number. */
				return sprintf( __( 'Attempt %d was held back.', 'shop-sidecar-companion' ), attempt );
			case 'attempt_cancelled':
				/* translators: %d: the attempt's number. */
				return sprintf( __( 'Attempt %d was cancelled.', 'shop-sidecar-companion' ), attempt );
			case 'customer_emailed':
				return __( 'The customer was e-mailed a link to pay and give a new payment method.', 'shop-sidecar-companion' );
			case 'customer_reminded':
				return __( 'The customer was reminded by e-mail before the deadline.', 'shop-sidecar-companion' );
			case 'recovered':
				return __( 'Recovered: the renewal is paid.', 'shop-sidecar-companion' );
			case 'lost':
				return dunning.timeline.some( ( one ) => one.event === 'staff_stopped_dunning' )
					? __( 'Lost: dunning was stopped by staff.', 'shop-sidecar-companion' )
					: __( 'Lost: the renewal was not paid in time.', 'shop-sidecar-companion' );
			case 'staff_charged':
				/* translators: %s: the staff member's name. */
				return sprintf( __( '%s charged the payment method now.', 'shop-sidecar-companion' ), by );
			case 'staff_sent_payment_link':
				/* translators: %s: the staff member's name. */
				return sprintf( __( '%s sent the customer a payment link.', 'shop-sidecar-companion' ), by );
			case 'staff_stopped_dunning':
				/* translators: %s: the staff member's name. */
				return sprintf( __( '%s stopped dunning.', 'shop-sidecar-companion' ), by );
			default:
				return __( 'Something happened that the panel has no words for.', 'shop-sidecar-companion' );
		}
	}

	/** The detail of a story line: why (a decline, a hold), how it was recovered. */
	function StoryDetail( { entry, fmt } ) {
		if ( entry.means ) {
			const word = wordFor( 'means', entry.means );
			return el( 'span', { className: 'shop-sidecar-means' }, word ? word.label : '', ' ', el( 'code', { className: 'shop-sidecar-code' }, entry.means ) );
		}
		if ( entry.reason || entry.state ) {
			if ( wordFor( 'refusal', entry.reason ) ) {
				return el( Refusal, { fmt, reason: entry.reason } );
			}
			return el( Decline, { code: entry.reason, state: entry.state } );
		}
		return null;
	}

	/** What happens next in a failed renewal's case, and when; or how it ended. */
	function nextLine( dunning, fmt ) {
		const next = dunning.next;
		if ( dunning.status === 'recovered' ) {
			const recovered = dunning.timeline.filter( ( entry ) => entry.event === 'recovered' ).pop();
			return recovered
				/* translators: %s: a day and time. */
				? sprintf( __( 'Recovered on %s. Nothing more happens.', 'shop-sidecar-companion' ), fmt.long( recovered.at ) )
				: __( 'Recovered. Nothing more happens.', 'shop-sidecar-companion' );
		}
		if ( dunning.status === 'lost' ) {
			return __( 'Dunning has ended without payment. Nothing more is tried.', 'shop-sidecar-companion' );
		}
		const lines = [];
		if ( next && next.event === 'wallet_retrying' ) {
			/* translators: %s: a day and time. */
			lines.push( sprintf( __( 'MobilePay is retrying the charge itself and tells the customer in the app; its outcome is known on %s. Nothing is charged on top.', 'shop-sidecar-companion' ), fmt.long( next.until ) ) );
		}
		if ( next && next.event === 'attempt' ) {
			/* translators: 1: a day and time, 2: the attempt's number. */
			lines.push( sprintf( __( 'We try again on %1$s (attempt %2$d).', 'shop-sidecar-companion' ), fmt.long( next.at ), next.attempt ) );
		}
		const deadline = ( next && next.event === 'deadline' && next.at ) || dunning.deadline;
		if ( deadline ) {
			/* translators: %s: a day and time. */
			lines.push( sprintf( __( 'The subscription is cancelled on %s unless the renewal is paid or the customer gives a new payment method.', 'shop-sidecar-companion' ), fmt.long( deadline ) ) );
		}
		if ( ! lines.length ) {
			lines.push( __( 'No attempt is planned; the case waits for the customer.', 'shop-sidecar-companion' ) );
		}
		return lines.join( ' ' );
	}

	/** The staff's actions on a failed renewal, each confirmed in the panel before it is sent. */
	const ACTIONS = [
		{ name: 'charge_now', path: 'charge-now', className: 'shop-sidecar-charge-now' },
		{ name: 'payment_link', path: 'payment-link', className: 'shop-sidecar-payment-link' },
		{ name: 'stop_dunning', path: 'stop-dunning', className: 'shop-sidecar-stop-dunning' },
	];

	function actionWords( name, dunning, fmt ) {
		const provider = wordFor( 'provider', dunning.provider );
		const amount = fmt.money( dunning.amount, dunning.currency );
		switch ( name ) {
			case 'charge_now':
				return {
					button: __( 'Charge now', 'shop-sidecar-companion' ),
					/* translators: 1: amount, 2: payment provider (e.g. Card (Frisbii)). */
					question: sprintf( __( 'Charge %1$s to the subscription\'s payment method (%2$s) now? This is one attempt, and it counts towards the card schemes\' limits.', 'shop-sidecar-companion' ), amount, provider ? provider.label : '' ),
					yes: __( 'Yes, charge now', 'shop-sidecar-companion' ),
				};
			case 'payment_link':
				return {
					button: __( 'Send payment link', 'shop-sidecar-companion' ),
					question: __( 'E-mail the customer now a link to pay the renewal and give a new payment method?', 'shop-sidecar-companion' ),
					yes: __( 'Yes, send the e-mail', 'shop-sidecar-companion' ),
				};
			default:
				return {
					button: __( 'Stop dunning', 'shop-sidecar-companion' ),
					question: __( 'Stop dunning? No more attempts are made and the failed renewal is closed as lost. The subscription is left as it is.', 'shop-sidecar-companion' ),
					yes: __( 'Yes, stop dunning', 'shop-sidecar-companion' ),
				};
		}
	}

	/** An action's result (the route's `result`) in words, as a notice. */
	function resultNotice( name, result, fmt ) {
		if ( name === 'charge_now' ) {
			const outcome = result && result.outcome;
			if ( outcome === 'paid' ) {
				return { status: 'success', message: result.reason === 'paid_meanwhile'
					? __( 'Nothing was charged: the renewal had been paid meanwhile.', 'shop-sidecar-companion' )
					: __( 'The charge went through. The renewal is paid.', 'shop-sidecar-companion' ) };
			}
			if ( outcome === 'declined' ) {
				return { status: 'warning', message: el( Fragment, null, __( 'The charge was declined:', 'shop-sidecar-companion' ), ' ', el( Decline, { code: result.reason } ) ) };
			}
			if ( outcome === 'held' ) {
				return { status: 'warning', message: el( Fragment, null, __( 'No charge was made:', 'shop-sidecar-companion' ), ' ', el( Refusal, { fmt, reason: result.reason } ) ) };
			}
			return { status: 'info', message: result && result.reason === 'provider_unreachable'
				? __( 'The provider did not answer. The same attempt is asked about again shortly, so nothing is charged twice.', 'shop-sidecar-companion' )
				: __( 'The charge was sent. The provider has not confirmed it yet; this panel shows it once it does.', 'shop-sidecar-companion' ) };
		}
		if ( name === 'payment_link' ) {
			return { status: 'success', message: __( 'The customer was e-mailed a link to pay.', 'shop-sidecar-companion' ) };
		}
		const cancelled = ( result && result.attempts_cancelled ) || 0;
		const left = ( result && result.charges_not_cancelled_yet ) || 0;
		const lines = [
			cancelled
				/* translators: %d: number of planned attempts cancelled. */
				? sprintf( _n( 'Dunning stopped: %d planned attempt cancelled.', 'Dunning stopped: %d planned attempts cancelled.', cancelled, 'shop-sidecar-companion' ), cancelled )
				: __( 'Dunning stopped.', 'shop-sidecar-companion' ),
			__( 'No more attempts are made; the subscription is left as it is.', 'shop-sidecar-companion' ),
		];
		if ( left ) {
			/* translators: %d: number of charges still held at the provider. */
			lines.push( sprintf( _n( '%d charge at the provider could not be cancelled yet; the service keeps trying.', '%d charges at the provider could not be cancelled yet; the service keeps trying.', left, 'shop-sidecar-companion' ), left ) );
		}
		return { status: left ? 'warning' : 'success', message: lines.join( ' ' ) };
	}

	/** A failed renewal, told: what failed and why, each step since, what happens next, and what staff can do. */
	function DunningStory( { dunning, fmt, actions, act, confirming, setConfirming } ) {
		const failure = dunning.failure || {};
		const status = wordFor( 'caseStatus', dunning.status );
		const provider = wordFor( 'provider', dunning.provider );
		return el(
			Section,
			{ title: __( 'Failed renewal', 'shop-sidecar-companion' ), className: 'shop-sidecar-dunning' },
			el(
				'p',
				{ className: 'shop-sidecar-summary', 'data-dunning-status': dunning.status },
				el( 'strong', null, status ? status.label : dunning.status ),
				' — ',
				sprintf(
					/* translators: 1: amount, 2: payment provider (e.g. Card (Frisbii)), 3: a day and time. */
					__( '%1$s by %2$s, failed on %3$s:', 'shop-sidecar-companion' ),
					fmt.money( dunning.amount, dunning.currency ),
					provider ? provider.label : dunning.provider,
					fmt.long( failure.at )
				),
				' ',
				el( Decline, { code: failure.reason, state: failure.state } )
			),
			el( 'p', { className: 'shop-sidecar-next', 'data-next': dunning.next ? dunning.next.event : 'none' }, nextLine( dunning, fmt ) ),
			el( Table, {
				caption: __( 'What happened', 'shop-sidecar-companion' ),
				className: 'shop-sidecar-timeline',
				empty: '',
				rows: dunning.timeline,
				columns: [
					{ title: __( 'When', 'shop-sidecar-companion' ), cell: ( entry ) => el( When, { fmt, value: entry.at } ) },
					{ title: __( 'What happened', 'shop-sidecar-companion' ), cell: ( entry ) => el( 'span', { 'data-event': entry.event, className: Date.parse( entry.at ) > Date.now() ? 'shop-sidecar-ahead' : '' }, storyLine( entry, dunning ) ) },
					{ title: __( 'Details', 'shop-sidecar-companion' ), cell: ( entry ) => el( StoryDetail, { entry, fmt } ) },
				],
			} ),
			// A closed case has nothing left to do: no row of buttons each saying so.
			dunning.actions && dunning.status === 'open' && el(
				'div',
				{ className: 'shop-sidecar-actions' },
				el(
					'div',
					{ className: 'shop-sidecar-row' },
					ACTIONS.map( ( action ) => {
						const allowed = dunning.actions[ action.name ] && dunning.actions[ action.name ].allowed;
						return el( Button, {
							key: action.name,
							variant: action.name === 'stop_dunning' ? 'tertiary' : 'secondary',
							isDestructive: action.name === 'stop_dunning',
							className: action.className,
							disabled: ! allowed || !! actions.busy || !! confirming,
							isBusy: actions.busy === action.name,
							onClick: () => setConfirming( action.name ),
						}, actionWords( action.name, dunning, fmt ).button );
					} )
				),
				el(
					'ul',
					{ className: 'shop-sidecar-refusals' },
					ACTIONS.filter( ( action ) => dunning.actions[ action.name ] && ! dunning.actions[ action.name ].allowed ).map( ( action ) => el(
						'li',
						{ key: action.name, 'data-action': action.name },
						el( 'strong', null, actionWords( action.name, dunning, fmt ).button + ': ' ),
						el( Refusal, { fmt, reason: dunning.actions[ action.name ].reason, notBefore: dunning.actions[ action.name ].not_before } )
					) )
				),
				confirming && el(
					'div',
					{ className: 'shop-sidecar-confirm', role: 'group', 'aria-label': actionWords( confirming, dunning, fmt ).button },
					el( 'p', null, actionWords( confirming, dunning, fmt ).question ),
					el(
						'div',
						{ className: 'shop-sidecar-row' },
						el( Button, { variant: 'primary', className: 'shop-sidecar-confirm-yes', isDestructive: confirming === 'stop_dunning', onClick: () => act( confirming ) }, actionWords( confirming, dunning, fmt ).yes ),
						el( Button, { variant: 'tertiary', className: 'shop-sidecar-confirm-no', onClick: () => setConfirming( null ) }, __( 'Cancel', 'shop-sidecar-companion' ) )
					)
				)
			)
		);
	}

	function PaymentsPanel( { settings } ) {
		const root = settings.apiRoot;
		const id = settings.orderId;
		const fmt = formats( settings.shop );
		const [ known, setKnown ] = useState( null );
		const [ loadError, setLoadError ] = useState( null );
		const [ findings, setFindings ] = useState( null );
		const [ confirming, setConfirming ] = useState( null );
		const actions = useActions( fmt );
		const wooBoxes = useWooCommerceBoxes( 'shop-sidecar/v1/orders/' + id + '/edit-screen', () => load() );

		async function load() {
			setLoadError( null );
			try {
				setKnown( await service( root, 'payment-hub/v1/orders/' + id + '/payments' ) );
			} catch ( error ) {
				setLoadError( explain( error, fmt ) );
			}
		}
		useEffect( () => {
			load();
		}, [] );

		const reconcile = () => actions.run(
			'reconcile',
			() => service( root, 'payment-hub/v1/orders/' + id + '/reconcile', { method: 'POST' } ),
			( answer ) => {
				setFindings( answer );
				load();
				const summary = answer.summary || {};
				if ( summary.unreachable ) {
					return { status: 'error', message: __( 'The provider could not be asked right now. Nothing was changed.', 'shop-sidecar-companion' ) };
				}
				if ( ! summary.changed ) {
					return __( 'The provider was asked: nothing new.', 'shop-sidecar-companion' );
				}
				// WooCommerce's boxes on this screen are filled with what WooCommerce makes of it, so Update keeps it.
				wooBoxes.follow( {} );
				/* translators: %d: number of payments changed. */
				return sprintf( _n( 'The provider was asked: %d payment was updated here, and WooCommerce updates the order.', 'The provider was asked: %d payments were updated here, and WooCommerce updates the order.', summary.changed, 'shop-sidecar-companion' ), summary.changed );
			}
		);

		const act = ( name ) => {
			const action = ACTIONS.find( ( one ) => one.name === name );
			setConfirming( null );
			return actions.run(
				name,
				() => service( root, 'payment-hub/v1/orders/' + id + '/' + action.path, { method: 'POST' } ),
				( answer ) => {
					setKnown( ( before ) => Object.assign( {}, before, { dunning: answer.dunning } ) );
					wooBoxes.follow( {} );
					return resultNotice( name, answer.result, fmt );
				},
				// Refused: the case has moved on since the page asked; draw it as it is now.
				() => load()
			);
		};

		/** What is wrong with a payment now: only a failed one shows its failure. */
		const failure = ( payment ) => ( payment.status === 'FAILED' && ( payment.failure_code || payment.failure_state )
			? el( Decline, { code: payment.failure_code, state: payment.failure_state, className: 'shop-sidecar-failure' } )
			: el( 'span', { className: 'shop-sidecar-failure' }, '—' ) );

		/** A second capture of the order (one renewal, one payment): which payment to refund. Nothing is refunded by the service. */
		const warning = ( found ) => el(
			Notice,
			{ key: found.refund.id, status: 'warning', isDismissible: false, className: 'shop-sidecar-second-capture' },
			// No payment of the service's had paid the order: it was paid or closed in the shop, and the provider took the service's withdrawn charge all the same.
			! found.kept ? sprintf(
				/* translators: 1: the payment to refund (its reference), 2: its amount, 3: the provider to refund at. */
				__( 'Second capture: %1$s (%2$s) was taken after this order had been paid or closed in the shop, although the service had asked to cancel it. Refund %1$s at %3$s, unless the order should keep it instead. Nothing is refunded automatically.', 'shop-sidecar-companion' ),
				found.refund.external_id,
				fmt.money( found.refund.amount, found.refund.currency ),
				( wordFor( 'provider', found.refund.provider ) || { label: found.refund.provider } ).label
			) : sprintf(
				/* translators: 1: the payment to refund (its reference), 2: its amount, 3: the payment that had paid the order, 4: its amount, 5: the provider to refund at. */
				__( 'Second capture: %1$s (%2$s) was captured after %3$s (%4$s) had already paid this order. Refund %1$s, the later capture, at %5$s. Nothing is refunded automatically.', 'shop-sidecar-companion' ),
				found.refund.external_id,
				fmt.money( found.refund.amount, found.refund.currency ),
				found.kept.external_id,
				fmt.money( found.kept.amount, found.kept.currency ),
				( wordFor( 'provider', found.refund.provider ) || { label: found.refund.provider } ).label
			)
		);

		const reference = ( value ) => el( 'code', { className: 'shop-sidecar-code shop-sidecar-reference' }, value );

		return el(
			Fragment,
			null,
			el( NoticeLine, { notice: actions.notice, onRemove: () => actions.setNotice( null ) } ),
			el( NoticeLine, { notice: wooBoxes.notice, onRemove: () => wooBoxes.setNotice( null ) } ),
			loadError && el( Notice, { status: 'error', isDismissible: false }, loadError, ' ', el( Button, { variant: 'link', onClick: load }, __( 'Try again', 'shop-sidecar-companion' ) ) ),
			! known && ! loadError && el( Spinner ),
			known && el(
				Fragment,
				null,
				( known.warnings || [] ).map( warning ),
				known.dunning && el( DunningStory, { dunning: known.dunning, fmt, actions, act, confirming, setConfirming } ),
				el(
					Section,
					null,
					el( Table, {
						caption: __( 'Payments at the providers', 'shop-sidecar-companion' ),
						empty: __( 'The service has no payments for this order.', 'shop-sidecar-companion' ),
						rows: known.payments,
						className: 'shop-sidecar-payments',
						columns: [
							{ title: __( 'Provider', 'shop-sidecar-companion' ), cell: ( payment ) => el( Worded, { kind: 'provider', code: payment.provider } ) },
							{ title: __( 'Reference', 'shop-sidecar-companion' ), cell: ( payment ) => reference( payment.external_id ) },
							{ title: __( 'Amount', 'shop-sidecar-companion' ), cell: ( payment ) => fmt.money( payment.amount, payment.currency ) },
							{ title: __( 'Status', 'shop-sidecar-companion' ), cell: ( payment ) => el( 'span', { 'data-payment-status': payment.status || '' }, payment.status
								? el( Worded, { kind: 'status', code: payment.status } )
								// No status yet: a charge the service asked for, whose provider has not answered.
								: __( 'Awaiting the provider', 'shop-sidecar-companion' ) ) },
							{ title: __( 'Why it failed', 'shop-sidecar-companion' ), cell: failure },
							{ title: __( 'Updated', 'shop-sidecar-companion' ), cell: ( payment ) => el( When, { fmt, value: payment.updated_at } ) },
						],
					} )
				),
				// Before the service told a failed renewal's story (dunning), its attempts were a table of their own.
				known.dunning === undefined && ( known.retries || [] ).length > 0 && el(
					Section,
					null,
					el( Table, {
						caption: __( 'Dunning attempts', 'shop-sidecar-companion' ),
						empty: '',
						rows: known.retries,
						columns: [
							{ title: __( 'Attempt', 'shop-sidecar-companion' ), cell: ( retry ) => retry.attempt },
							{ title: __( 'Status', 'shop-sidecar-companion' ), cell: ( retry ) => el( 'span', { 'data-retry-status': retry.status, title: retry.result || '' }, el( Worded, { kind: 'attemptStatus', code: retry.status } ) ) },
							{ title: __( 'When', 'shop-sidecar-companion' ), cell: ( retry ) => el( When, { fmt, value: retry.scheduled_at, className: 'shop-sidecar-retry-at' } ) },
						],
					} )
				),
				el(
					Section,
					null,
					el( Table, {
						caption: __( 'Messages from the providers, newest first', 'shop-sidecar-companion' ),
						empty: __( 'No messages from the providers about this order.', 'shop-sidecar-companion' ),
						rows: known.webhooks,
						className: 'shop-sidecar-webhooks',
						columns: [
							{ title: __( 'Received', 'shop-sidecar-companion' ), cell: ( hook ) => el( When, { fmt, value: hook.created_at } ) },
							{ title: __( 'Provider', 'shop-sidecar-companion' ), cell: ( hook ) => el( Worded, { kind: 'provider', code: hook.provider } ) },
							{ title: __( 'Message', 'shop-sidecar-companion' ), cell: ( hook ) => el( Worded, { kind: 'event', code: hook.event_type, fallback: __( 'A message the panel has no words for', 'shop-sidecar-companion' ), showCode: true } ) },
							{ title: __( 'Handled', 'shop-sidecar-companion' ), cell: ( hook ) => el( Worded, { kind: 'webhookStatus', code: hook.status } ) },
						],
					} )
				)
			),
			el(
				Section,
				null,
				el(
					'div',
					{ className: 'shop-sidecar-row' },
					el( Button, { variant: 'secondary', onClick: reconcile, isBusy: actions.busy === 'reconcile', disabled: !! actions.busy, className: 'shop-sidecar-reconcile' }, __( 'Ask the provider now', 'shop-sidecar-companion' ) )
				),
				findings && findings.items && findings.items.length > 0 && el( Table, {
					caption: __( 'What the provider said just now', 'shop-sidecar-companion' ),
					empty: '',
					rows: findings.items,
					className: 'shop-sidecar-findings',
					columns: [
						{ title: __( 'Reference', 'shop-sidecar-companion' ), cell: ( item ) => reference( item.external_id ) },
						{ title: __( 'Here before', 'shop-sidecar-companion' ), cell: ( item ) => el( Worded, { kind: 'status', code: item.local_status } ) },
						{ title: __( 'At the provider', 'shop-sidecar-companion' ), cell: ( item ) => el( Worded, { kind: 'status', code: item.provider_state } ) },
						{
							title: __( 'What the provider reported', 'shop-sidecar-companion' ),
							cell: ( item ) => ( item.events && item.events.length
								? el( 'ul', { className: 'shop-sidecar-events', title: ( item.notes || [] ).join( '\n' ) }, item.events.map( ( event, index ) => el( 'li', { key: index }, el( Worded, { kind: 'event', code: event, fallback: __( 'A message the panel has no words for', 'shop-sidecar-companion' ), showCode: true } ) ) ) )
								: '—' ),
						},
						{ title: __( 'Outcome', 'shop-sidecar-companion' ), cell: ( item ) => el( 'span', { 'data-outcome': item.outcome, title: item.error || '' }, el( Worded, { kind: 'outcome', code: item.outcome, explain: true } ) ) },
					],
				} )
			)
		);
	}

	const PANELS = { support: SupportPanel, payments: PaymentsPanel };

	wp.domReady( () => {
		document.querySelectorAll( '.shop-sidecar-panel[data-panel]' ).forEach( ( node ) => {
			const Panel = PANELS[ node.getAttribute( 'data-panel' ) ];
			let settings;
			try {
				settings = JSON.parse( node.getAttribute( 'data-settings' ) || '{}' );
			} catch ( error ) {
				return;
			}
			if ( ! Panel ) {
				return;
			}
			const view = el( 'div', { className: 'shop-sidecar', 'aria-live': 'off' }, el( Panel, { settings } ) );
			if ( wp.element.createRoot ) {
				wp.element.createRoot( node ).render( view );
			} else {
				render( view, node );
			}
		} );
	} );
}( window.wp ) );
