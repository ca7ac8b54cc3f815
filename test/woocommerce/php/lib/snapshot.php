<?php
/**
 * snapshot {ids}: what WooCommerce itself says about orders and subscriptions, read through its own API
 * (wc_get_order etc.), plus the side effects other code sees: stock, download permissions, Analytics rows,
 * Action Scheduler actions and the recorder's e-mails and hooks. Dates are ISO 8601 UTC strings.
 */

/** WooCommerce values as JSON-able data: WC_DateTime as ISO UTC, data objects by their get_data(). */
function sidecar_plain( $value ) {
	if ( $value instanceof DateTimeInterface ) {
		return gmdate( 'Y-m-d\TH:i:s\Z', $value->getTimestamp() );
	}
	if ( $value instanceof WC_Meta_Data ) {
		return array( 'key' => $value->key, 'value' => sidecar_plain( $value->value ) );
	}
	if ( is_object( $value ) && method_exists( $value, 'get_data' ) ) {
		return sidecar_plain( $value->get_data() );
	}
	if ( is_array( $value ) ) {
		return array_map( 'sidecar_plain', $value );
	}
	if ( is_object( $value ) ) {
		return sidecar_plain( get_object_vars( $value ) );
	}
	return $value;
}

/** key => [values...] of an object's meta through its API, keys and values sorted. */
function sidecar_meta_map( WC_Data $object ): object {
	$map = array();
	foreach ( $object->get_meta_data() as $meta ) {
		$map[ $meta->key ][] = sidecar_plain( $meta->value );
	}
	ksort( $map );
	foreach ( $map as &$values ) {
		usort( $values, static fn( $a, $b ) => strcmp( json_encode( $a ), json_encode( $b ) ) );
	}
	return (object) $map;
}

function sidecar_gmt_date( $date ): ?string {
	if ( ! $date ) {
		return null;
	}
	return $date instanceof DateTimeInterface ? sidecar_plain( $date ) : gmdate( 'Y-m-d\TH:i:s\Z', strtotime( $date . ' UTC' ) );
}

function sidecar_cmd_snapshot( array $args ): array {
	$by_id = array();
	foreach ( $args['ids'] ?? array() as $id ) {
		$by_id[ (string) (int) $id ] = sidecar_snapshot_one( (int) $id );
	}
	return array( 'by_id' => (object) $by_id );
}

function sidecar_snapshot_one( int $id ): array {
	global $wpdb;
	$order = wc_get_order( $id );
	if ( ! $order ) {
		return array( 'exists' => false, 'recorded' => Sidecar_Test_Recorder::entries( $id ) );
	}

	$data = sidecar_plain( $order->get_data() );
	foreach ( array( 'meta_data', 'line_items', 'tax_lines', 'shipping_lines', 'fee_lines', 'coupon_lines' ) as $key ) {
		unset( $data[ $key ] ); // given below, one way for all
	}
	ksort( $data );

	$items    = array();
	$products = array();
	foreach ( $order->get_items( array( 'line_item', 'tax', 'shipping', 'fee', 'coupon' ) ) as $item ) {
		$item_data = sidecar_plain( $item->get_data() );
		unset( $item_data['meta_data'] );
		ksort( $item_data );
		$items[] = array( 'type' => $item->get_type(), 'data' => $item_data, 'meta' => sidecar_meta_map( $item ) );
		if ( $item instanceof WC_Order_Item_Product && $item->get_product_id() ) {
			$products[ $item->get_product_id() ] = true;
		}
	}

	$product_state = array();
	foreach ( array_keys( $products ) as $product_id ) {
		$product = wc_get_product( $product_id );
		if ( $product ) {
			$product_state[ (string) $product_id ] = array(
				'stock_quantity' => $product->get_stock_quantity(),
				'stock_status'   => $product->get_stock_status(),
				'total_sales'    => (int) $product->get_total_sales(),
			);
		}
	}

	$notes = array();
	foreach ( wc_get_order_notes( array( 'order_id' => $id, 'order_by' => 'date_created', 'order' => 'ASC' ) ) as $note ) {
		$notes[] = array(
			'id'            => (int) $note->id,
			'date_created'  => sidecar_gmt_date( $note->date_created ),
			'content'       => $note->content,
			'customer_note' => (bool) $note->customer_note,
			'added_by'      => $note->added_by,
		);
	}
	usort( $notes, static fn( $a, $b ) => $a['id'] <=> $b['id'] );

	$out = array(
		'exists'   => true,
		'type'     => $order->get_type(),
		'status'   => $order->get_status(),
		'data'     => $data,
		'meta'     => sidecar_meta_map( $order ),
		'notes'    => $notes,
		'items'    => $items,
		'products' => (object) $product_state,
	);

	if ( function_exists( 'wcs_is_subscription' ) && wcs_is_subscription( $order ) ) {
		$dates = array();
		foreach ( array( 'date_created', 'start', 'trial_end', 'next_payment', 'last_order_date_created', 'last_order_date_paid', 'end', 'cancelled', 'payment_retry' ) as $type ) {
			$dates[ $type ] = sidecar_gmt_date( $order->get_date( $type ) );
		}
		$out['subscription'] = array(
			'dates'                   => $dates,
			'suspension_count'        => (int) $order->get_suspension_count(),
			'requires_manual_renewal' => (bool) $order->get_requires_manual_renewal(),
			'is_manual'               => (bool) $order->is_manual(),
			'related_orders'          => array_map( 'intval', array_values( $order->get_related_orders( 'ids', 'any' ) ) ),
		);
	} else {
		if ( function_exists( 'wcs_get_subscriptions_for_order' ) ) {
			$out['subscription_ids'] = array_map( 'intval', array_keys( wcs_get_subscriptions_for_order( $order, array( 'order_type' => 'any' ) ) ) );
		}
		if ( $order instanceof WC_Order ) {
			$out['total_refunded'] = wc_format_decimal( $order->get_total_refunded() );
			$out['refunds']        = array_map(
				static fn( WC_Order_Refund $refund ) => array(
					'id'               => $refund->get_id(),
					'amount'           => $refund->get_amount(),
					'reason'           => $refund->get_reason(),
					'refunded_by'      => $refund->get_refunded_by(),
					'refunded_payment' => $refund->get_refunded_payment(),
					'date_created'     => sidecar_gmt_date( $refund->get_date_created() ),
				),
				array_reverse( $order->get_refunds() )
			);
		}
	}

	$out['download_permissions'] = $wpdb->get_results(
		$wpdb->prepare( "SELECT * FROM {$wpdb->prefix}woocommerce_downloadable_product_permissions WHERE order_id = %d ORDER BY permission_id", $id ),
		ARRAY_A
	);
	$out['analytics'] = array(
		'order_stats'          => $wpdb->get_row( $wpdb->prepare( "SELECT * FROM {$wpdb->prefix}wc_order_stats WHERE order_id = %d", $id ), ARRAY_A ),
		'order_product_lookup' => $wpdb->get_results( $wpdb->prepare( "SELECT * FROM {$wpdb->prefix}wc_order_product_lookup WHERE order_id = %d ORDER BY order_item_id", $id ), ARRAY_A ),
	);
	$out['actions']  = sidecar_actions_for( $id );
	$out['recorded'] = Sidecar_Test_Recorder::entries( $id );
	return $out;
}

/** Action Scheduler actions whose arguments mention the id (as a whole number), oldest first. */
function sidecar_actions_for( int $id ): array {
	global $wpdb;
	$rows = $wpdb->get_results(
		$wpdb->prepare(
			"SELECT a.action_id, a.hook, a.status, a.scheduled_date_gmt, g.slug AS group_slug, a.args, a.extended_args, a.priority
			 FROM {$wpdb->prefix}actionscheduler_actions a
			 LEFT JOIN {$wpdb->prefix}actionscheduler_groups g ON g.group_id = a.group_id
			 WHERE CONCAT(COALESCE(a.args, ''), ' ', COALESCE(a.extended_args, '')) REGEXP %s
			 ORDER BY a.action_id",
			'(^|[^0-9])' . $id . '([^0-9]|$)'
		),
		ARRAY_A
	);
	return array_map(
		static function ( $row ) {
			$args = json_decode( (string) ( $row['extended_args'] ?: $row['args'] ), true );
			return array(
				'action_id'          => (int) $row['action_id'],
				'hook'               => $row['hook'],
				'status'             => $row['status'],
				'scheduled_date_gmt' => $row['scheduled_date_gmt'],
				'group'              => $row['group_slug'] ?? '',
				'priority'           => null === $row['priority'] ? null : (int) $row['priority'],
				'args'               => $args,
			);
		},
		$rows ?: array()
	);
}
