<?php
/**
 * Shop Sidecar companion: the changes the service hands over (loaded by ../../shop-sidecar-companion.php).
 *
 * The service stores each change in the table {prefix}sidecar_woocommerce_changes and, in the same
 * database transaction, schedules an Action Scheduler action `shop_sidecar_apply_change` with the row's
 * ID. This plugin decides nothing: what happens, and when, the service has decided already. It makes each
 * change once, whichever of two ways reaches it first:
 *
 * 1. The hand-over (since version 2). Right after the transaction commits, the service calls
 *      POST {siteurl}/?rest_route=/shop-sidecar/v1/apply
 *      Content-Type: application/json
 *      X-Shop-Sidecar-Timestamp: <unix seconds>
 *      X-Shop-Sidecar-Signature: <lowercase hex HMAC-SHA256>
 *      {"changes":[12,13]}
 *    and the changes are applied inside that request, so a payment decision reaches WooCommerce well
 *    under a second after the provider's webhook instead of when WP-Cron next runs Action Scheduler
 *    (on a quiet shop minutes later, or not until someone visits the site). The key is derived from the
 *    site's own salts, so there is nothing to configure and nobody without them can call the route:
 *      key       = hash_hmac('sha256', 'shop-sidecar-handover-v1', wp_salt('logged_in'))
 *      signature = hash_hmac('sha256', timestamp . "\n" . raw request body, key)
 *    A wrong or missing signature, or a timestamp more than 300 s from this server's clock, is answered
 *    401 (code shop_sidecar_unauthorized) before anything else is read; a body other than
 *    {"changes":[up to 100 positive integers]} 400 (shop_sidecar_bad_request). An empty list is a ping.
 *    The answer: {"version":2,"changes":[{"id":12,"status":"applied|failed|pending|missing","result":"..."}]},
 *    each status as the row is after the attempt (pending: its order was busy, or the request ran out of
 *    time; missing: no such change). Sending the same IDs again applies nothing twice.
 * 2. Action Scheduler (WooCommerce's own queue, run by WP-Cron or a system cron), the safety net: the
 *    action applies the change if it still waits, and otherwise completes without doing anything.
 */

defined( 'ABSPATH' ) || exit;

// 1: Action Scheduler only; 2: the hand-over route; 3: the dunning e-mail and the cancel after dunning; 4: a staff
// member's order note (order_note).
// The plugin header's Version (../../shop-sidecar-companion.php) is this number too, so WordPress's plugin list
// and `payment-hub woocommerce status` show the same version.
const SHOP_SIDECAR_COMPANION_VERSION = 5;
const SHOP_SIDECAR_COMPANION_OPTION  = 'shop_sidecar_companion';

/**
 * Tells the service the companion runs here (it hands changes over only then). Refreshed at most
 * hourly, so a removed companion is noticed within the service's silence limit.
 */
add_action(
	'init',
	static function () {
		$stated = json_decode( (string) get_option( SHOP_SIDECAR_COMPANION_OPTION, '' ), true );
		if ( is_array( $stated ) && SHOP_SIDECAR_COMPANION_VERSION === ( $stated['version'] ?? null ) && time() - (int) ( $stated['seen'] ?? 0 ) < HOUR_IN_SECONDS ) {
			return;
		}
		update_option(
			SHOP_SIDECAR_COMPANION_OPTION,
			wp_json_encode( array( 'version' => SHOP_SIDECAR_COMPANION_VERSION, 'seen' => time() ) ),
			false
		);
	}
);

add_action( 'shop_sidecar_apply_change', 'shop_sidecar_apply_change', 10, 1 );

/*
 * The hand-over route (see the header): the service asks for its changes to be applied now.
 */
const SHOP_SIDECAR_HANDOVER_MAX_SKEW = 300;
const SHOP_SIDECAR_HANDOVER_MAX_IDS  = 100;
/** Time one request spends applying at most; changes not reached stay pending for the next request or Action Scheduler. */
const SHOP_SIDECAR_HANDOVER_BUDGET = 20;
/** Wait at most this long for another run busy with the same order (Action Scheduler holds it a second or two). */
const SHOP_SIDECAR_HANDOVER_LOCK_WAIT = 10;

add_action(
	'rest_api_init',
	static function () {
		register_rest_route(
			'shop-sidecar/v1',
			'/apply',
			array(
				'methods'             => 'POST',
				'callback'            => 'shop_sidecar_handover_apply',
				'permission_callback' => 'shop_sidecar_handover_verify',
			)
		);
	}
);

/** The key both sides derive from the site's logged-in salt (LOGGED_IN_KEY . LOGGED_IN_SALT). */
function shop_sidecar_handover_key() {
	return hash_hmac( 'sha256', 'shop-sidecar-handover-v1', wp_salt( 'logged_in' ) );
}

/**
 * Permission check: the timestamp is recent and the signature is the HMAC of timestamp and raw body.
 * No database work happens before the signature is verified.
 *
 * @param WP_REST_Request $request The request.
 * @return true|WP_Error
 */
function shop_sidecar_handover_verify( $request ) {
	$timestamp = trim( (string) $request->get_header( 'X-Shop-Sidecar-Timestamp' ) );
	$signature = strtolower( trim( (string) $request->get_header( 'X-Shop-Sidecar-Signature' ) ) );
	$refuse    = static function ( $why ) {
		return new WP_Error( 'shop_sidecar_unauthorized', "Shop sidecar hand-over refused: {$why}.", array( 'status' => 401 ) );
	};
	if ( '' === $timestamp || '' === $signature ) {
		return $refuse( 'the X-Shop-Sidecar-Timestamp and X-Shop-Sidecar-Signature headers are required' );
	}
	if ( ! ctype_digit( $timestamp ) || abs( time() - (int) $timestamp ) > SHOP_SIDECAR_HANDOVER_MAX_SKEW ) {
		return $refuse( 'the timestamp is not within ' . SHOP_SIDECAR_HANDOVER_MAX_SKEW . ' seconds of this server\'s clock' );
	}
	$expected = hash_hmac( 'sha256', $timestamp . "\n" . $request->get_body(), shop_sidecar_handover_key() );
	if ( ! hash_equals( $expected, $signature ) ) {
		return $refuse( 'the signature does not match (the service and WordPress must share LOGGED_IN_KEY and LOGGED_IN_SALT)' );
	}
	return true;
}

/**
 * Applies the changes named in the body, each as Action Scheduler would (earlier waiting changes of the same
 * object first, under the object's lock), and says how each row stands afterwards.
 *
 * @param WP_REST_Request $request The verified request.
 * @return WP_REST_Response|WP_Error
 */
function shop_sidecar_handover_apply( $request ) {
	global $wpdb;
	$ids = shop_sidecar_handover_ids( $request->get_body() );
	if ( is_wp_error( $ids ) ) {
		return $ids;
	}
	// The work of a change is not cut short when the caller stops waiting.
	ignore_user_abort( true );
	$table    = $wpdb->prefix . 'sidecar_woocommerce_changes';
	$deadline = microtime( true ) + SHOP_SIDECAR_HANDOVER_BUDGET;
	$changes  = array();
	foreach ( $ids as $id ) {
		$error = null;
		$left  = (int) floor( $deadline - microtime( true ) );
		if ( $left > 0 ) {
			try {
				shop_sidecar_apply_change( $id, min( SHOP_SIDECAR_HANDOVER_LOCK_WAIT, $left ) );
			} catch ( Throwable $caught ) {
				$error = $caught->getMessage();
				if ( $caught->getPrevious() ) {
					// A change was tried and failed (not merely busy): Action Scheduler will not see this error.
					shop_sidecar_log_failure( $error );
				}
			}
		} else {
			$error = 'not tried in this request (out of time); the next hand-over or Action Scheduler applies it';
		}
		$row = $wpdb->get_row( $wpdb->prepare( "SELECT status, result FROM {$table} WHERE id = %d", $id ) );
		if ( ! $row ) {
			$changes[] = array( 'id' => $id, 'status' => 'missing', 'result' => "Shop sidecar change {$id} does not exist." );
			continue;
		}
		$status = (string) $row->status;
		if ( 'applied' === $status || 'failed' === $status ) {
			$changes[] = array( 'id' => $id, 'status' => $status, 'result' => (string) $row->result );
			continue;
		}
		// Still waiting (or being applied by another run right now): pending to the service.
		$changes[] = array( 'id' => $id, 'status' => 'pending', 'result' => null !== $error ? $error : 'waiting' );
	}
	return new WP_REST_Response( array( 'version' => SHOP_SIDECAR_COMPANION_VERSION, 'changes' => $changes ), 200 );
}

/**
 * The body's change IDs: exactly {"changes":[...]} with at most 100 positive integers.
 *
 * @param string $body The raw request body.
 * @return int[]|WP_Error
 */
function shop_sidecar_handover_ids( $body ) {
	$bad     = static function ( $why ) {
		return new WP_Error( 'shop_sidecar_bad_request', "Shop sidecar hand-over: {$why}.", array( 'status' => 400 ) );
	};
	// Objects stay objects, so {"changes":{"0":12}} is not taken for a list.
	$decoded = json_decode( (string) $body );
	if ( ! $decoded instanceof stdClass || array( 'changes' ) !== array_keys( get_object_vars( $decoded ) ) || ! is_array( $decoded->changes ) ) {
		return $bad( 'the body must be {"changes":[change IDs]}' );
	}
	$ids = $decoded->changes;
	if ( count( $ids ) > SHOP_SIDECAR_HANDOVER_MAX_IDS ) {
		return $bad( 'at most ' . SHOP_SIDECAR_HANDOVER_MAX_IDS . ' changes per request' );
	}
	foreach ( $ids as $id ) {
		if ( ! is_int( $id ) || $id < 1 ) {
			return $bad( 'each change ID must be a positive integer' );
		}
	}
	return $ids;
}

/** A change that failed when handed over, in WooCommerce → Status → Logs (source shop-sidecar); the row keeps it too. */
function shop_sidecar_log_failure( $message ) {
	if ( function_exists( 'wc_get_logger' ) ) {
		wc_get_logger()->error( $message, array( 'source' => 'shop-sidecar' ) );
	}
}

/**
 * Applies change $change_id, after any earlier change of the same order or subscription that is still
 * waiting, so that two actions run out of order (or side by side) still apply in the order decided.
 *
 * A change no longer waiting (applied by the hand-over, or by another run) is left alone: the call then
 * returns without error, so Action Scheduler completes its action cleanly.
 *
 * @param int $change_id         Row ID in {prefix}sidecar_woocommerce_changes.
 * @param int $lock_wait_seconds How long to wait for another run busy with the same order or subscription.
 * @throws Exception When the change cannot be applied; Action Scheduler records the message.
 */
function shop_sidecar_apply_change( $change_id, $lock_wait_seconds = 30 ) {
	global $wpdb;
	$table  = $wpdb->prefix . 'sidecar_woocommerce_changes';
	$change = $wpdb->get_row( $wpdb->prepare( "SELECT id, object_id FROM {$table} WHERE id = %d", $change_id ) );
	if ( ! $change ) {
		throw new Exception( "Shop sidecar change {$change_id} does not exist." );
	}
	$lock = 'shop_sidecar_' . $wpdb->prefix . $change->object_id;
	if ( '1' !== (string) $wpdb->get_var( $wpdb->prepare( 'SELECT GET_LOCK(%s, %d)', $lock, max( 0, (int) $lock_wait_seconds ) ) ) ) {
		throw new Exception( "Shop sidecar change {$change_id}: order {$change->object_id} is busy; try again." );
	}
	try {
		$waiting = $wpdb->get_results(
			$wpdb->prepare( "SELECT id, op, object_id, payload FROM {$table} WHERE object_id = %d AND id <= %d AND status = 'pending' ORDER BY id", $change->object_id, $change->id )
		);
		foreach ( $waiting as $row ) {
			shop_sidecar_apply_one( $table, $row );
		}
	} finally {
		$wpdb->query( $wpdb->prepare( 'SELECT RELEASE_LOCK(%s)', $lock ) );
	}
}

/**
 * @param string $table The changes table.
 * @param object $row   id, op, object_id, payload.
 */
function shop_sidecar_apply_one( $table, $row ) {
	global $wpdb;
	$claimed = $wpdb->query( $wpdb->prepare( "UPDATE {$table} SET status = 'applying', attempts = attempts + 1 WHERE id = %d AND status = 'pending'", $row->id ) );
	if ( 1 !== $claimed ) {
		return;
	}
	shop_sidecar_applying_change( true );
	try {
		$result = shop_sidecar_run_change( (string) $row->op, (int) $row->object_id, (array) json_decode( (string) $row->payload, true ) );
		$wpdb->update( $table, array( 'status' => 'applied', 'result' => $result, 'applied_at' => current_time( 'mysql', true ) ), array( 'id' => $row->id ) );
	} catch ( Throwable $error ) {
		$wpdb->update( $table, array( 'status' => 'failed', 'result' => $error->getMessage(), 'applied_at' => current_time( 'mysql', true ) ), array( 'id' => $row->id ) );
		throw new Exception( "Shop sidecar change {$row->id} ({$row->op} of #{$row->object_id}) failed: " . $error->getMessage(), 0, $error );
	} finally {
		shop_sidecar_applying_change( false );
	}
}

/**
 * Whether a change the service decided is being applied right now (the hooks it sets off tell of the service's own
 * decision, which includes/shop-notices.php does not tell the service back).
 *
 * @param bool|null $applying Sets it, when given.
 */
function shop_sidecar_applying_change( $applying = null ) {
	static $now = false;
	if ( null !== $applying ) {
		$now = $applying;
	}
	return $now;
}

/**
 * The metas the provider's own WooCommerce plugin reads to find the money (`_reepay_order` and its state for the
 * card gateway's plugin, `_charge_id`, `_agreement_id` and the charge's status for the wallet's), as that plugin
 * writes them when it charges a renewal itself: the service sends them with a payment of its own charge
 * (src/payments/plugin-payment-metas.ts). Set on the order object; the caller saves it.
 *
 * @return bool Whether the change carried any.
 */
function shop_sidecar_set_payment_metas( WC_Order $order, array $p ) {
	if ( empty( $p['meta'] ) || ! is_array( $p['meta'] ) ) {
		return false;
	}
	foreach ( (array) ( $p['meta']['set'] ?? array() ) as $key => $value ) {
		$order->update_meta_data( (string) $key, (string) $value );
	}
	foreach ( (array) ( $p['meta']['delete'] ?? array() ) as $key ) {
		$order->delete_meta_data( (string) $key );
	}
	return true;
}

/**
 * The card invoice's credit notes a refund stands for (payload credit_note_ids), added to the order's
 * `_reepay_credit_note_ids`, where the card gateway's plugin registers the refunds it knows: its webhook handler
 * (OrderFlow/Webhook.php, invoice_refund) refunds in WooCommerce every credit note not registered there, so without
 * them a refund the service handed over would be refunded again when the plugin hears the same event. Set on the
 * order object; the caller saves it.
 *
 * @return bool Whether any was added.
 */
function shop_sidecar_register_credit_notes( WC_Order $order, array $p ) {
	if ( empty( $p['credit_note_ids'] ) || ! is_array( $p['credit_note_ids'] ) ) {
		return false;
	}
	$known = $order->get_meta( '_reepay_credit_note_ids' );
	$known = is_array( $known ) ? $known : array();
	$added = array_values( array_diff( array_map( 'strval', $p['credit_note_ids'] ), $known ) );
	if ( ! $added ) {
		return false;
	}
	$order->update_meta_data( '_reepay_credit_note_ids', array_merge( $known, $added ) );
	return true;
}

/**
 * One change, made with the calls a payment gateway plugin or a shop manager would make.
 *
 * @return string What was done, stored with the change.
 */
function shop_sidecar_run_change( $op, $id, array $p ) {
	switch ( $op ) {
		case 'order_payment_failed':
			$order = shop_sidecar_order( $id );
			if ( $order->has_status( 'failed' ) ) {
				// update_status() drops the note when the status does not change.
				$order->add_order_note( $p['note'] );
				return 'order already failed; noted';
			}
			$order->update_status( 'failed', $p['note'] );
			return 'order failed';

		case 'order_payment_authorized':
			$order = shop_sidecar_order( $id );
			$named = shop_sidecar_set_payment_metas( $order, $p );
			if ( ! $order->has_status( array( 'pending', 'failed' ) ) ) {
				if ( $named ) {
					$order->save();
				}
				return 'order is ' . $order->get_status() . '; left as it is' . ( $named ? '; payment metas set' : '' );
			}
			$order->set_transaction_id( $p['transaction_id'] );
			$order->update_status( 'on-hold', $p['note'] );
			return 'order on hold';

		case 'order_payment_complete':
			$order    = shop_sidecar_order( $id );
			// WooCommerce's own list, less the statuses it counts as paid: other plugins add to the list (the wallet's
			// plugin adds processing and completed for every order, to capture its own reserved charges), and an order
			// already paid must not be paid again (a second woocommerce_payment_complete, its e-mails, a new transaction id).
			$awaiting = array_diff(
				apply_filters( 'woocommerce_valid_order_statuses_for_payment_complete', array( 'on-hold', 'pending', 'failed', 'cancelled' ), $order ),
				wc_get_is_paid_statuses()
			);
			// Set before payment_complete() saves the order, so whoever hears it finds the money where the plugin keeps it.
			$named = shop_sidecar_set_payment_metas( $order, $p );
			if ( ! $order->has_status( $awaiting ) ) {
				// Paid already (a second capture): the later payment is the one to refund, and the metas name it.
				if ( $named ) {
					$order->save();
				}
				return 'order is ' . $order->get_status() . '; left as it is' . ( $named ? '; payment metas set' : '' );
			}
			$order->add_order_note( $p['note'] );
			// When the provider took the money, if it said so; payment_complete() keeps a date_paid already set.
			if ( isset( $p['paid_at'] ) && is_numeric( $p['paid_at'] ) && (int) $p['paid_at'] > 0 && ! $order->get_date_paid( 'edit' ) ) {
				$order->set_date_paid( (int) $p['paid_at'] );
			}
			$order->payment_complete( $p['transaction_id'] );
			return 'payment complete';

		case 'order_refunded':
			$order  = shop_sidecar_order( $id );
			$amount = round( (float) $p['refunded_total'] - (float) $order->get_total_refunded(), wc_get_price_decimals() );
			if ( $amount <= 0 ) {
				if ( shop_sidecar_register_credit_notes( $order, $p ) ) {
					$order->save_meta_data();
				}
				return 'nothing more to refund';
			}
			$refund = wc_create_refund(
				array(
					'order_id'       => $id,
					'amount'         => $amount,
					'reason'         => $p['reason'],
					'refund_payment' => false, // The provider has refunded already.
					'restock_items'  => false, // Money back says nothing of goods back.
				)
			);
			if ( is_wp_error( $refund ) ) {
				throw new Exception( $refund->get_error_message() );
			}
			if ( shop_sidecar_register_credit_notes( $order, $p ) ) {
				$order->save_meta_data();
			}
			return 'refunded ' . $amount;

		case 'subscription_pause':
			$subscription = shop_sidecar_subscription( $id );
			return shop_sidecar_as_user(
				(int) $p['user_id'],
				static function () use ( $subscription, $p ) {
					// Saved once, as Subscriptions' own update_status('on-hold') saves (so woocommerce_update_order
					// and woocommerce_update_subscription fire once): the pause end goes with the status change's
					// save, and update_dates() writes the dates itself (save_dates()) without another save. The new
					// next payment comes after the move to on-hold, so no payment action is scheduled for it.
					$subscription->update_meta_data( '_schedule_auto_reactivation', $p['auto_reactivation'] );
					if ( $subscription->has_status( 'on-hold' ) ) {
						// update_status() drops the note of a status that does not change.
						$subscription->add_order_note( $p['note'], 0, true );
						$subscription->save();
					} else {
						$subscription->update_status( 'on-hold', $p['note'], true );
					}
					$subscription->update_dates( array( 'next_payment' => $p['next_payment'] ) );
					return 'paused';
				}
			);

		case 'subscription_activate':
			$subscription = shop_sidecar_subscription( $id );
			return shop_sidecar_as_user(
				(int) $p['user_id'],
				static function () use ( $subscription, $p ) {
					$subscription->delete_meta_data( '_schedule_auto_reactivation' );
					if ( ! $subscription->has_status( 'on-hold' ) || ! $subscription->can_be_updated_to( 'active' ) ) {
						$subscription->save();
						return 'subscription is ' . $subscription->get_status() . '; left as it is';
					}
					$subscription->update_status( 'active', $p['note'], (int) $p['user_id'] > 0 );
					return 'active';
				}
			);

		case 'order_note':
			// A staff member's action on the order, noted as WP admin notes it: in their name, heard by other plugins.
			$order = shop_sidecar_order( $id );
			return shop_sidecar_as_user(
				(int) $p['user_id'],
				static function () use ( $order, $p ) {
					$order->add_order_note( $p['note'], 0, (int) $p['user_id'] > 0 );
					return 'noted';
				}
			);

		case 'customer_payment_method_needed':
			// WooCommerce e-mails the customer the change-payment-method link (includes/emails.php).
			return shop_sidecar_payment_method_needed( $id, $p );

		case 'subscription_cancel_after_dunning':
			$subscription = shop_sidecar_subscription( $id );
			if ( ! $subscription->has_status( 'on-hold' ) || ! $subscription->can_be_updated_to( 'cancelled' ) ) {
				return 'subscription is ' . $subscription->get_status() . '; left as it is';
			}
			// Subscriptions' own cancellation: end and cancelled dates now, scheduled actions gone, its hooks and e-mails.
			$subscription->update_status( 'cancelled', $p['note'] );
			return 'cancelled';
	}
	throw new Exception( "unknown change {$op}" );
}

/*
 * Renewal discounts. Staff create them through the service (pending, in {prefix}sidecar_renewal_discounts).
 * When Subscriptions creates a renewal order (scheduled payment, early or manual renewal) the pending
 * discounts of its subscription lower that order before any gateway charges it: one negative fee line
 * each, taxed by WooCommerce as it taxes a negative fee (split over the order's tax classes), the total
 * lower by exactly the discount, never below zero. Each discount is then applied and linked to the order.
 * The subscription itself is never changed, so later renewals are at the full price again.
 */
add_filter( 'wcs_renewal_order_created', 'shop_sidecar_apply_renewal_discounts', 20, 2 );
add_action( 'woocommerce_subscription_status_cancelled', 'shop_sidecar_cancel_renewal_discounts' );
add_action( 'woocommerce_subscription_status_expired', 'shop_sidecar_cancel_renewal_discounts' );

/**
 * @param WC_Order|mixed  $renewal      The renewal order Subscriptions just created.
 * @param WC_Subscription $subscription Its subscription.
 * @return WC_Order|mixed The same order, lowered by the subscription's pending discounts.
 */
function shop_sidecar_apply_renewal_discounts( $renewal, $subscription ) {
	global $wpdb;
	if ( ! $renewal instanceof WC_Order || ! is_object( $subscription ) ) {
		return $renewal;
	}
	$table    = $wpdb->prefix . 'sidecar_renewal_discounts';
	$types    = $wpdb->prefix . 'sidecar_renewal_discount_types';
	$suppress = $wpdb->suppress_errors( true ); // The service's tables exist only once it has been migrated.
	$pending  = $wpdb->get_results(
		$wpdb->prepare( "SELECT d.id, d.amount, d.currency, t.scheme, t.name FROM {$table} d JOIN {$types} t ON t.id = d.type_id WHERE d.subscription_id = %d AND d.status = 'pending' ORDER BY d.id", $subscription->get_id() )
	);
	$wpdb->suppress_errors( $suppress );
	if ( empty( $pending ) ) {
		return $renewal;
	}
	$decimals = wc_get_price_decimals();
	$base     = (float) $renewal->get_total();
	foreach ( $pending as $discount ) {
		// Claimed first: a discount is applied to one renewal only, whatever runs beside this request.
		if ( 1 !== $wpdb->query( $wpdb->prepare( "UPDATE {$table} SET status = 'applying' WHERE id = %d AND status = 'pending'", $discount->id ) ) ) {
			continue;
		}
		if ( 'percentage' !== $discount->scheme && $discount->currency !== $renewal->get_currency() ) {
			// Money in another currency than the renewal's: kept for a renewal in its own currency.
			$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET status = 'pending' WHERE id = %d", $discount->id ) );
			continue;
		}
		$wanted  = 'percentage' === $discount->scheme ? $base * (float) $discount->amount / 100 : (float) $discount->amount;
		$applied = min( round( $wanted, $decimals ), round( (float) $renewal->get_total(), $decimals ) );
		if ( $applied > 0 ) {
			shop_sidecar_add_discount_line( $renewal, $applied, $discount );
		}
		$now = current_time( 'mysql', true );
		$wpdb->query(
			$wpdb->prepare(
				"UPDATE {$table} SET status = 'applied', order_id = %d, applied_amount = %s, applied_at = %s, updated_at = %s WHERE id = %d",
				$renewal->get_id(),
				wc_format_decimal( $applied, $decimals ),
				$now,
				$now,
				$discount->id
			)
		);
		/* translators: 1: discount ID, 2: discount type name, 3: amount, 4: currency */
		$renewal->add_order_note( sprintf( 'Renewal discount #%1$d (%2$s) applied: %3$s %4$s.', $discount->id, $discount->name, wc_format_decimal( $applied, $decimals ), $renewal->get_currency() ) );
	}
	return $renewal;
}

/** One negative fee line lowering the order's total, taxes included, by exactly $amount. */
function shop_sidecar_add_discount_line( WC_Order $order, $amount, $discount ) {
	$decimals = wc_get_price_decimals();
	$before   = (float) $order->get_total();
	$tax      = (float) $order->get_total_tax();
	// WooCommerce taxes a negative fee on top of its (net) total, in the order's own proportions.
	$rate = $before - $tax > 0 ? $tax / ( $before - $tax ) : 0;
	$fee  = new WC_Order_Item_Fee();
	$fee->set_name( $discount->name );
	$fee->set_tax_status( 'taxable' );
	$fee->set_tax_class( '' );
	$fee->set_total( -$amount / ( 1 + $rate ) );
	$fee->add_meta_data( '_sidecar_renewal_discount', (int) $discount->id, true );
	$order->add_item( $fee );
	$order->calculate_totals();
	// Taxes are rounded per line: nudge the net amount until the total is exactly what was asked.
	for ( $attempt = 0; $attempt < 3; $attempt++ ) {
		$off = round( (float) $order->get_total() - ( $before - $amount ), $decimals );
		if ( 0.0 === (float) $off ) {
			break;
		}
		$fee->set_total( (float) $fee->get_total() - $off / ( 1 + $rate ) );
		$order->calculate_totals();
	}
	$fee->save();
}

/** A subscription that ends takes its pending discounts with it. */
function shop_sidecar_cancel_renewal_discounts( $subscription ) {
	global $wpdb;
	$table    = $wpdb->prefix . 'sidecar_renewal_discounts';
	$suppress = $wpdb->suppress_errors( true );
	$wpdb->query( $wpdb->prepare( "UPDATE {$table} SET status = 'cancelled', updated_at = %s WHERE subscription_id = %d AND status = 'pending'", current_time( 'mysql', true ), $subscription->get_id() ) );
	$wpdb->suppress_errors( $suppress );
}

function shop_sidecar_order( $id ) {
	$order = wc_get_order( $id );
	if ( ! $order || 'shop_order' !== $order->get_type() ) {
		throw new Exception( "order {$id} not found" );
	}
	return $order;
}

function shop_sidecar_subscription( $id ) {
	$subscription = function_exists( 'wcs_get_subscription' ) ? wcs_get_subscription( $id ) : false;
	if ( ! $subscription ) {
		throw new Exception( "subscription {$id} not found" );
	}
	return $subscription;
}

/** Runs $work as the staff member who asked for it, so notes and status changes carry their name. */
function shop_sidecar_as_user( $user_id, callable $work ) {
	$previous = get_current_user_id();
	if ( $user_id > 0 ) {
		wp_set_current_user( $user_id );
	}
	try {
		return $work();
	} finally {
		wp_set_current_user( $previous );
	}
}
