import test from 'ava';
import { renewalWantsMoney, takenForNobody, type RenewalFacts } from '../../src/payments/renewal-wants-money.js';

// The one rule every path asks before money is asked for a renewal (src/payments/renewal-wants-money.ts), with
// WooCommerce Subscriptions' own retries as the twin (WCS_Retry_Manager: a retry is dropped when its subscription's
// status moves on or its renewal order is trashed or deleted, and charged only while the order needs payment).

const wanted: RenewalFacts = {
  order: { status: 'failed' },
  subscription: { status: 'on-hold', paymentMethod: 'vipps_recurring' },
  dunningCase: { status: 'OPEN' },
  provider: 'mobile_wallet',
};

test('A failed or pending renewal whose subscription is on hold, case open, on the method it uses now, wants money', (t) => {
  t.deepEqual(renewalWantsMoney(wanted), { wants: true });
  t.deepEqual(renewalWantsMoney({ ...wanted, order: { status: 'pending' } }), { wants: true });
  // Staff may activate the subscription while its renewal is still owed.
  t.deepEqual(renewalWantsMoney({ ...wanted, subscription: { status: 'active', paymentMethod: 'vipps_recurring' } }), { wants: true });
  // Not heard of yet: no case says otherwise.
  t.deepEqual(renewalWantsMoney({ ...wanted, dunningCase: null }), { wants: true });
  // A gateway neither provider's: the charge stays on the provider it was made on.
  t.deepEqual(renewalWantsMoney({ ...wanted, subscription: { status: 'on-hold', paymentMethod: 'bacs' } }), { wants: true });
});

test('The order paid, cancelled, trashed or deleted: no money, with the order\'s status as the reason', (t) => {
  for (const status of ['processing', 'completed', 'on-hold', 'cancelled', 'refunded', 'trash']) {
    t.deepEqual(renewalWantsMoney({ ...wanted, order: { status } }), { wants: false, reason: `order_${status}` }, status);
  }
  t.deepEqual(renewalWantsMoney({ ...wanted, order: null }), { wants: false, reason: 'order_gone' });
});

test('The subscription cancelled (My Account), pending cancellation, expired, switched, trashed or deleted: no money', (t) => {
  for (const status of ['cancelled', 'pending-cancel', 'expired', 'switched', 'trash']) {
    t.deepEqual(renewalWantsMoney({ ...wanted, subscription: { status, paymentMethod: 'vipps_recurring' } }), { wants: false, reason: `subscription_${status}` }, status);
  }
  t.deepEqual(renewalWantsMoney({ ...wanted, subscription: null }), { wants: false, reason: 'subscription_gone' });
});

test('The case closed (lost at the deadline, stopped by staff, recovered), or the subscription moved to the other provider: no money', (t) => {
  for (const status of ['LOST', 'RECOVERED']) t.deepEqual(renewalWantsMoney({ ...wanted, dunningCase: { status } }), { wants: false, reason: 'dunning_ended' });
  t.deepEqual(renewalWantsMoney({ ...wanted, subscription: { status: 'on-hold', paymentMethod: 'reepay_checkout' } }), { wants: false, reason: 'method_switched' });
});

test('The order\'s state decides first: a paid order reads as paid, whatever became of its subscription', (t) => {
  t.deepEqual(renewalWantsMoney({ ...wanted, order: { status: 'processing' }, subscription: null, dunningCase: { status: 'RECOVERED' } }), { wants: false, reason: 'order_processing' });
});

test('Money taken after a withdrawal for a paid or closed order or an ended subscription is for nobody; after Stop dunning, an ended attempt, a switch or the deadline it pays an unpaid order', (t) => {
  for (const reason of ['order_processing', 'order_cancelled', 'order_trash', 'order_gone', 'subscription_cancelled', 'subscription_trash']) t.true(takenForNobody(reason), reason);
  for (const reason of [null, 'order_paid', 'dunning_stopped', 'attempt_ended', 'method_switched', 'deadline', 'dunning_ended']) t.false(takenForNobody(reason), String(reason));
});
