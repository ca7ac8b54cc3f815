import test from 'ava';
import { OPEN_PAYMENT_OF } from '../../entities/woocommerce-changes.js';
import { PAYMENT_HAND_OVER_OPS, withPaymentsHandedOver } from '../../src/shop/order.js';

// The order status route finds the payment decisions still on their way to WooCommerce through the changes'
// `open_payment_of` column (entities/woocommerce-changes.ts), which the database computes from an op list of its
// own. That list must be the ops the answer is built from (the route itself, and the migrated column against this
// expression, are tested in test/payments/woocommerce-handover.test.ts).

const opsIn = (sql: string): string[] => {
  const list = /\bop IN \(([^)]*)\)/.exec(sql);
  return (list?.[1] ?? '').split(',').map((op) => op.trim().replace(/^'|'$/g, '')).filter(Boolean).sort();
};

test('The open_payment_of column counts exactly the ops whose hand-over the order status answer applies, while pending or applying', (t) => {
  t.deepEqual(opsIn(OPEN_PAYMENT_OF), [...PAYMENT_HAND_OVER_OPS].sort());
  t.regex(OPEN_PAYMENT_OF, /status IN \('pending', 'applying'\)/);
});

test('Each op the column counts changes what the answer shows for an order awaiting payment', (t) => {
  for (const op of PAYMENT_HAND_OVER_OPS) {
    const order = { status: 'pending', datePaid: null, paymentsNotYetInShop: [{ op, at: new Date(0) }] };
    t.not(withPaymentsHandedOver(order as never).status, 'pending', op);
  }
});
