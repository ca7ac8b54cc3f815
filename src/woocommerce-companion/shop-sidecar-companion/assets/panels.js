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
 */
( function ( wp ) {
	'use strict';

	const { createElement: el, Fragment, render, useState, useEffect, useRef } = wp.element;
	const { Button, Notice, CheckboxControl, SelectControl, TextControl, Spinner } = wp.components;
	const { __, sprintf } = wp.i18n;
	const apiFetch = wp.apiFetch;

	/** An answer or refusal of the service, as a sentence a shop manager understands. */
	function explain( error ) {
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
		if ( status === 409 || status === 400 || status === 404 ) {
			/* translators: %s: the service's explanation, in English. */
			return sprintf( __( 'Nothing was changed: %s', 'shop-sidecar-companion' ), ( error && error.message ) || code );
		}
		/* translators: %s: the service's explanation, in English. */
		return sprintf( __( 'The payment service could not do this: %s', 'shop-sidecar-companion' ), ( error && error.message ) || __( 'unknown error', 'shop-sidecar-companion' ) );
	}

	/** apiFetch against the service's routes on this origin. */
	function service( root, path, options ) {
		return apiFetch( Object.assign( { url: root + path.replace( /^\//, '' ) }, options || {} ) );
	}

	/**
	 * One action at a time per panel: a second click while one is on its way does nothing, so a double click
	 * records nothing twice. `run` returns whether the action succeeded.
	 */
	function useActions() {
		const [ busy, setBusy ] = useState( null );
		const [ notice, setNotice ] = useState( null );
		const inFlight = useRef( false );
		async function run( name, work, done ) {
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
					setNotice( { status: 'success', message } );
				}
				return true;
			} catch ( error ) {
				setNotice( { status: 'error', message: explain( error ) } );
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

	/**
	 * A moment the service wrote (ISO 8601, with its offset) in the shop's time zone, as WP admin shows
	 * dates: `YYYY-MM-DD HH:MM`.
	 */
	function shown( value ) {
		return value ? wp.date.dateI18n( 'Y-m-d H:i', value ) : '—';
	}

	/** An amount in minor units (as the providers and the service count money) in the currency's own format. */
	function money( minor, currency ) {
		if ( minor === null || minor === undefined ) {
			return '—';
		}
		try {
			const format = new Intl.NumberFormat( document.documentElement.lang || undefined, { style: 'currency', currency } );
			return format.format( minor / Math.pow( 10, format.resolvedOptions().maximumFractionDigits ) );
		} catch ( error ) {
			return minor + ' ' + ( currency || '' );
		}
	}

	function Table( { caption, columns, rows, empty } ) {
		if ( ! rows.length ) {
			return el( 'p', { className: 'shop-sidecar-empty' }, empty );
		}
		return el(
			'table',
			{ className: 'widefat striped shop-sidecar-table' },
			el( 'caption', { className: 'screen-reader-text' }, caption ),
			el( 'thead', null, el( 'tr', null, columns.map( ( column ) => el( 'th', { key: column.title, scope: 'col' }, column.title ) ) ) ),
			el(
				'tbody',
				null,
				rows.map( ( row, index ) => el( 'tr', { key: row.id || index }, columns.map( ( column ) => el( 'td', { key: column.title }, column.cell( row ) ) ) ) )
			)
		);
	}

	function Section( { title, children } ) {
		return el( 'div', { className: 'shop-sidecar-section' }, el( 'h4', null, title ), children );
	}

	/* ---------------------------------------------------------------- WooCommerce's own boxes on the same screen */

	/**
	 * WooCommerce's own boxes on the subscription's edit screen (Subscription Data's status select, Schedule's
	 * dates, the notes) are drawn with the page, and WooCommerce's Update posts every field in them: left as drawn
	 * after a panel action, they would save the old state back. So after each action they are filled with the new
	 * state, at once from the service's answer and then, once WooCommerce has applied the change, with
	 * WooCommerce's own values and notes. A field the staff member changed themselves is left as they set it: that
	 * edit is theirs to save. The value each field was last filled with is in the hidden input
	 * shop_sidecar_drawn[<field>], which the companion also compares on Update (includes/admin-panels.php).
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
	 * follow( answer ) after an action: WooCommerce's boxes show the answer at once, then WooCommerce's own state
	 * as soon as it has applied the change (asked every few seconds, for up to ten minutes); `applied` gets that
	 * state. `notice` says when a field kept the staff member's own edit, or when WooCommerce is slow to apply.
	 */
	function useWooCommerceBoxes( settings, applied ) {
		const [ notice, setNotice ] = useState( null );
		const following = useRef( 0 );
		useEffect( () => () => {
			following.current += 1;
		}, [] );

		async function follow( answer ) {
			const mine = ++following.current;
			let kept = false;
			const fill = ( fields, choices ) => {
				Object.keys( fields ).forEach( ( name ) => {
					kept = ! boxes.fill( name, fields[ name ], name === 'order_status' ? choices : null ) || kept;
				} );
			};
			const keptNotice = { status: 'warning', message: __( 'You had changed the status or a date in WooCommerce\'s boxes on this page before this action. They still show your change, and Update will save it instead.', 'shop-sidecar-companion' ) };
			fill( { order_status: 'wc-' + answer.status, next_payment_timestamp_utc: seconds( answer.next_payment_date ) } );
			setNotice( kept ? keptNotice : null );
			const started = Date.now();
			for ( let wait = 400; Date.now() - started < 10 * 60 * 1000; wait = Math.min( wait * 2, 10000 ) ) {
				await sleep( wait );
				if ( mine !== following.current ) {
					return;
				}
				let screen = null;
				try {
					screen = await apiFetch( { path: 'shop-sidecar/v1/subscriptions/' + settings.subscriptionId + '/edit-screen' } );
				} catch ( error ) {
					screen = null; // asked again
				}
				if ( mine !== following.current ) {
					return;
				}
				if ( screen && ! screen.waiting ) {
					fill( screen.fields, screen.status_options );
					boxes.notes( screen.notes_html );
					applied( screen );
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
		const actions = useActions();
		const wooBoxes = useWooCommerceBoxes( settings, ( screen ) => setState( { status: screen.status, next_payment_date: screen.next_payment, auto_reactivation_date: screen.pause_end } ) );

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
				setLoadError( explain( error ) );
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
				wooBoxes.follow( answer );
				/* translators: 1: pause end date, 2: next payment date. */
				return sprintf( __( 'Paused until %1$s. Next payment: %2$s.', 'shop-sidecar-companion' ), shown( answer.auto_reactivation_date ), shown( answer.next_payment_date ) );
			}
		);
		const forceActivate = () => actions.run(
			'activate',
			() => service( root, 'subscription-support/v1/subscription/' + id + '/force-activate', { method: 'POST' } ),
			( answer ) => {
				setState( answer );
				wooBoxes.follow( answer );
				/* translators: %s: next payment date. */
				return sprintf( __( 'The subscription is active again. Next payment: %s.', 'shop-sidecar-companion' ), shown( answer.next_payment_date ) );
			}
		);
		const record = () => actions.run(
			'record',
			() => service( root, 'subscription-support/v1/subscription/' + id + '/cancellation-reasons', { method: 'POST', data: { reason_post_ids: chosen.map( Number ) } } ),
			( entries ) => {
				setLoaded( ( before ) => Object.assign( {}, before, { recorded: before.recorded.concat( entries ) } ) );
				setChosen( [] );
				/* translators: %d: number of reasons recorded. */
				return sprintf( __( 'Recorded %d cancellation reason(s).', 'shop-sidecar-companion' ), entries.length );
			}
		);
		const createDiscount = () => actions.run(
			'discount',
			() => service( root, 'renewal-discounts/v1/discounts', { method: 'POST', data: { subscription: id, type: Number( discountType ), amount, created_via: 'wp-admin' } } ),
			( discount ) => {
				setLoaded( ( before ) => Object.assign( {}, before, { discounts: [ discount ].concat( before.discounts ) } ) );
				setAmount( '' );
				/* translators: 1: amount, 2: unit. */
				return sprintf( __( 'Discount of %1$s %2$s created for the next renewal.', 'shop-sidecar-companion' ), discount.amount, unitOf( discount.type ) );
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
			return type.scheme.amount_type === 'percent' ? '%' : settings.currency;
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
				el( 'dd', { 'data-field': 'next-payment' }, shown( state.next_payment_date ) ),
				el( 'dt', null, __( 'Paused until', 'shop-sidecar-companion' ) ),
				el( 'dd', { 'data-field': 'pause-end' }, shown( onHold ? state.auto_reactivation_date : null ) )
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
					empty: __( 'No cancellation reason recorded.', 'shop-sidecar-companion' ),
					rows: loaded.recorded,
					columns: [
						{ title: __( 'Reason', 'shop-sidecar-companion' ), cell: ( entry ) => entry.title },
						{ title: __( 'Recorded', 'shop-sidecar-companion' ), cell: ( entry ) => shown( entry.date ) },
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
					empty: __( 'No renewal discounts.', 'shop-sidecar-companion' ),
					rows: loaded.discounts,
					columns: [
						{ title: __( 'Type', 'shop-sidecar-companion' ), cell: ( discount ) => ( discount.type ? discount.type.name : '—' ) },
						{ title: __( 'Amount', 'shop-sidecar-companion' ), cell: ( discount ) => discount.amount + ' ' + unitOf( discount.type ) },
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

	function PaymentsPanel( { settings } ) {
		const root = settings.apiRoot;
		const id = settings.orderId;
		const [ known, setKnown ] = useState( null );
		const [ loadError, setLoadError ] = useState( null );
		const [ findings, setFindings ] = useState( null );
		const actions = useActions();

		async function load() {
			setLoadError( null );
			try {
				setKnown( await service( root, 'payment-hub/v1/orders/' + id + '/payments' ) );
			} catch ( error ) {
				setLoadError( explain( error ) );
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
					return __( 'The provider could not be asked right now. Nothing was changed.', 'shop-sidecar-companion' );
				}
				return summary.changed
					/* translators: %d: number of payments changed. */
					? sprintf( __( 'The provider was asked: %d payment(s) changed. Reload the page to see the order as WooCommerce shows it now.', 'shop-sidecar-companion' ), summary.changed )
					: __( 'The provider was asked: nothing new.', 'shop-sidecar-companion' );
			}
		);

		const failure = ( payment ) => [ payment.failure_description || payment.failure_code, payment.failure_state ].filter( Boolean ).join( ' · ' ) || '—';

		/** A second capture of the order (one renewal, one payment): which payment to refund. Nothing is refunded by the service. */
		const warning = ( found ) => el(
			Notice,
			{ key: found.refund.id, status: 'warning', isDismissible: false, className: 'shop-sidecar-second-capture' },
			sprintf(
				/* translators: 1: the payment to refund (its reference), 2: its amount, 3: the payment that had paid the order, 4: its amount, 5: the provider to refund at. */
				__( 'Second capture: %1$s (%2$s) was captured after %3$s (%4$s) had already paid this order. Refund %1$s, the later capture, at %5$s. Nothing is refunded automatically.', 'shop-sidecar-companion' ),
				found.refund.external_id,
				money( found.refund.amount, found.refund.currency ),
				found.kept.external_id,
				money( found.kept.amount, found.kept.currency ),
				found.refund.provider
			)
		);

		return el(
			Fragment,
			null,
			el( NoticeLine, { notice: actions.notice, onRemove: () => actions.setNotice( null ) } ),
			loadError && el( Notice, { status: 'error', isDismissible: false }, loadError, ' ', el( Button, { variant: 'link', onClick: load }, __( 'Try again', 'shop-sidecar-companion' ) ) ),
			! known && ! loadError && el( Spinner ),
			known && el(
				Fragment,
				null,
				( known.warnings || [] ).map( warning ),
				el(
					Section,
					{ title: __( 'Payments', 'shop-sidecar-companion' ) },
					el( Table, {
						caption: __( 'Payments', 'shop-sidecar-companion' ),
						empty: __( 'The service has no payments for this order.', 'shop-sidecar-companion' ),
						rows: known.payments,
						columns: [
							{ title: __( 'Provider', 'shop-sidecar-companion' ), cell: ( payment ) => payment.provider },
							{ title: __( 'Reference', 'shop-sidecar-companion' ), cell: ( payment ) => payment.external_id },
							{ title: __( 'Amount', 'shop-sidecar-companion' ), cell: ( payment ) => money( payment.amount, payment.currency ) },
							{ title: __( 'Status', 'shop-sidecar-companion' ), cell: ( payment ) => el( 'span', { 'data-payment-status': payment.status }, payment.status || '—' ) },
							{ title: __( 'Failure reason', 'shop-sidecar-companion' ), cell: ( payment ) => el( 'span', { className: 'shop-sidecar-failure' }, failure( payment ) ) },
							{ title: __( 'Updated', 'shop-sidecar-companion' ), cell: ( payment ) => shown( payment.updated_at ) },
						],
					} )
				),
				el(
					Section,
					{ title: __( 'Dunning attempts', 'shop-sidecar-companion' ) },
					el( Table, {
						caption: __( 'Dunning attempts', 'shop-sidecar-companion' ),
						empty: __( 'No new attempts are planned.', 'shop-sidecar-companion' ),
						rows: known.retries,
						columns: [
							{ title: __( 'Attempt', 'shop-sidecar-companion' ), cell: ( retry ) => retry.attempt },
							{ title: __( 'Status', 'shop-sidecar-companion' ), cell: ( retry ) => el( 'span', { 'data-retry-status': retry.status }, retry.status ) },
							{ title: __( 'When', 'shop-sidecar-companion' ), cell: ( retry ) => el( 'span', { className: 'shop-sidecar-retry-at' }, shown( retry.scheduled_at ) ) },
							{ title: __( 'Result', 'shop-sidecar-companion' ), cell: ( retry ) => retry.result || '—' },
						],
					} )
				),
				el(
					Section,
					{ title: __( 'Webhooks received', 'shop-sidecar-companion' ) },
					el( Table, {
						caption: __( 'Webhooks received, newest first', 'shop-sidecar-companion' ),
						empty: __( 'No webhooks received for this order.', 'shop-sidecar-companion' ),
						rows: known.webhooks,
						columns: [
							{ title: __( 'Received', 'shop-sidecar-companion' ), cell: ( hook ) => shown( hook.created_at ) },
							{ title: __( 'Provider', 'shop-sidecar-companion' ), cell: ( hook ) => hook.provider },
							{ title: __( 'Event', 'shop-sidecar-companion' ), cell: ( hook ) => hook.event_type },
							{ title: __( 'Status', 'shop-sidecar-companion' ), cell: ( hook ) => hook.status },
						],
					} )
				)
			),
			el(
				'div',
				{ className: 'shop-sidecar-row' },
				el( Button, { variant: 'secondary', onClick: reconcile, isBusy: actions.busy === 'reconcile', disabled: !! actions.busy, className: 'shop-sidecar-reconcile' }, __( 'Ask the provider now', 'shop-sidecar-companion' ) )
			),
			findings && findings.items && findings.items.length > 0 && el( Table, {
				caption: __( 'What the provider said', 'shop-sidecar-companion' ),
				empty: '',
				rows: findings.items,
				columns: [
					{ title: __( 'Reference', 'shop-sidecar-companion' ), cell: ( item ) => item.external_id },
					{ title: __( 'Here before', 'shop-sidecar-companion' ), cell: ( item ) => item.local_status || '—' },
					{ title: __( 'At the provider', 'shop-sidecar-companion' ), cell: ( item ) => item.provider_state || '—' },
					{ title: __( 'Outcome', 'shop-sidecar-companion' ), cell: ( item ) => el( 'span', { 'data-outcome': item.outcome }, item.outcome ) },
					{ title: __( 'Notes', 'shop-sidecar-companion' ), cell: ( item ) => ( item.error ? item.error : ( item.notes || [] ).join( '; ' ) ) || '—' },
				],
			} )
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
