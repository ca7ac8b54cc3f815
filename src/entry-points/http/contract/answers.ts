/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of what the routes answer, shared by several routes and
 * named in the document's components. What a route takes is in its contract (`routes/*.contract.ts`). The
 * tests validate real answers against these schemas, so a changed answer shape fails there.
 */
import { DISCOUNT_SCHEMES } from '../../../renewal-discounts/discount-schemes';

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const dateTime: Schema = { type: 'string', format: 'date-time', description: 'ISO 8601 in the shop\'s time zone, with its offset.' };
const gmtDateTime: Schema = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$', description: 'UTC, `YYYY-MM-DD HH:MM:SS` as WordPress stores it.' };
const utcTime: Schema = { type: 'string', format: 'date-time', description: 'UTC, ISO 8601 with milliseconds and `Z`.' };
/** A staff action's answer on a failed renewal: what it came to, and the case after it. */
const staffActionAnswer = (result: Schema): Schema => ({
  type: 'object', additionalProperties: false, required: ['result', 'dunning'], properties: { result, dunning: ref('DunningCase') },
});
const decimal: Schema = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', description: 'A decimal as text, with the shop\'s price decimals.' };

export const components: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: 'Every refusal and failure, on every route.',
    required: ['code', 'message', 'data'],
    additionalProperties: false,
    properties: {
      code: { type: 'string', description: 'Stable, machine-readable.' },
      message: { type: 'string', description: 'For people; may change.' },
      data: {
        type: 'object',
        required: ['status'],
        properties: {
          status: { type: 'integer', description: 'The HTTP status again.' },
          params: { type: 'array', items: { type: 'string' }, description: 'With `invalid_params` (and `params_must_be_in_body`): each field at fault.' },
          invalid_ids: { type: 'array', items: { type: 'integer' }, description: 'Cancellation reason IDs that are not published reasons.' },
          subscription_status: { type: 'string', description: 'With `invalid_state`: the subscription\'s status.' },
          reason: { type: 'string', description: 'With `action_not_allowed`: why the action is not possible now (as `dunning.actions.*.reason`).' },
          not_before: { type: 'string', format: 'date-time', description: 'With `action_not_allowed`: from when it is possible, when that is known (ISO 8601 with the offset).' },
        },
      },
    },
  },

  OrderStatus: {
    type: 'object',
    description: 'The order as the helpdesk sees it. A site filter (`helpdesk_order_status_data`) may add, change or remove fields.',
    required: [
      'order_number', 'status', 'date_created', 'date_paid', 'date_completed', 'needs_payment', 'payment_method_title', 'total', 'currency',
      'item_count', 'shipping_method', 'shipping_country', 'is_refunded', 'estimated_delivery', 'tracking',
    ],
    properties: {
      order_number: { type: 'string', description: 'As the customer knows it (a sequential numbering plugin\'s number when one is active).' },
      status: { type: 'string', description: 'WooCommerce\'s status without `wc-`: `pending`, `processing`, `completed`, ...' },
      date_created: nullable(dateTime),
      date_paid: nullable(dateTime),
      date_completed: nullable(dateTime),
      needs_payment: { type: 'boolean' },
      payment_method_title: { type: 'string' },
      total: decimal,
      currency: { type: 'string' },
      item_count: { type: 'integer', minimum: 0 },
      shipping_method: { type: 'string', description: 'The shipping lines\' titles, comma-separated.' },
      shipping_country: { type: 'string' },
      is_refunded: { type: 'boolean' },
      estimated_delivery: {
        anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }],
        description: '`YYYY-MM-DD`, or null when there is no estimate; a site filter may put other text here.',
      },
      tracking: {
        type: 'object',
        description: '`{}` when the order has no shipping label, `{tracking_url}` when it has.',
        additionalProperties: false,
        properties: { tracking_url: { type: 'string', minLength: 1 } },
      },
    },
  },

  CustomerSubscription: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'status', 'start_date', 'next_payment_date', 'end_date', 'auto_reactivation_date', 'recurring_total', 'currency', 'billing_period', 'billing_interval', 'payment_method_title', 'items'],
    properties: {
      id: { type: 'integer' },
      status: { type: 'string' },
      start_date: nullable(dateTime),
      next_payment_date: nullable(dateTime),
      end_date: nullable(dateTime),
      auto_reactivation_date: { ...nullable(dateTime), description: 'Set while the subscription is paused.' },
      recurring_total: decimal,
      currency: { type: 'string' },
      billing_period: { type: 'string' },
      billing_interval: { type: 'integer' },
      payment_method_title: { type: 'string' },
      items: {
        type: 'array',
        items: { type: 'object', additionalProperties: false, required: ['name', 'quantity'], properties: { name: { type: 'string' }, quantity: { type: 'integer' } } },
      },
    },
  },

  Customer: {
    type: 'object',
    description: 'The customer as the helpdesk\'s end user (Dixa\'s field names beside the plain ones), with the ten newest orders and the subscriptions.',
    additionalProperties: false,
    required: ['name', 'email', 'phone', 'displayName', 'firstName', 'lastName', 'phoneNumber', 'externalId', 'additionalEmails', 'additionalPhoneNumbers', 'orders', 'subscriptions'],
    properties: {
      name: { type: 'string' },
      email: nullable({ type: 'string' }),
      phone: { ...nullable({ type: 'string' }), description: 'E.164 when the stored number could be read, otherwise as stored.' },
      displayName: { type: 'string' },
      firstName: { type: 'string' },
      lastName: { type: 'string' },
      phoneNumber: nullable({ type: 'string' }),
      externalId: { ...nullable({ type: 'string' }), description: 'The WooCommerce customer (user) ID; null for a guest.' },
      additionalEmails: { type: 'array', items: { type: 'string' } },
      additionalPhoneNumbers: { type: 'array', items: { type: 'string' } },
      orders: {
        type: 'array',
        maxItems: 10,
        items: { allOf: [ref('OrderStatus'), { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } }] },
      },
      subscriptions: { type: 'array', items: ref('CustomerSubscription') },
    },
  },

  NoCustomer: { type: 'object', maxProperties: 0, description: 'Nothing matches.' },

  HelpdeskCard: {
    type: 'object',
    description: 'One conversation\'s card, in the words of the shop\'s staff language. Dates are words in the shop\'s time zone; amounts in the shop\'s price format.',
    additionalProperties: false,
    required: ['language', 'customer', 'subscriptions', 'orders'],
    properties: {
      language: { enum: ['da', 'en'] },
      customer: nullable({
        type: 'object', additionalProperties: false, required: ['name', 'email', 'phone'],
        properties: { name: { type: 'string' }, email: nullable({ type: 'string' }), phone: nullable({ type: 'string', description: 'E.164 when it could be read.' }) },
      }),
      subscriptions: {
        type: 'array',
        maxItems: 10,
        items: {
          type: 'object', additionalProperties: false,
          required: ['id', 'status', 'status_label', 'products', 'total', 'next_payment', 'payment_method', 'failed_renewal', 'actions', 'admin_url'],
          properties: {
            id: { type: 'integer' },
            status: { type: 'string', description: 'WooCommerce Subscriptions\' status without `wc-`.' },
            status_label: { type: 'string' },
            products: { type: 'string' },
            total: { type: 'string' },
            next_payment: nullable({ type: 'string' }),
            payment_method: nullable({ type: 'string', description: '`Visa •••• 4242, expires 10/27`; `MobilePay, agreement active`.' }),
            failed_renewal: nullable({
              type: 'object', additionalProperties: false, required: ['order_id', 'headline', 'next', 'actions'],
              properties: { order_id: { type: 'integer' }, headline: { type: 'string' }, next: { type: 'string' }, actions: { type: 'array', items: ref('HelpdeskCardAction') } },
            }),
            actions: { type: 'array', items: ref('HelpdeskCardAction') },
            admin_url: { type: 'string', format: 'uri' },
          },
        },
      },
      orders: {
        type: 'array',
        maxItems: 5,
        items: {
          type: 'object', additionalProperties: false,
          required: ['number', 'status_label', 'date_created', 'total', 'tracking_url', 'estimated_delivery', 'admin_url'],
          properties: {
            number: { type: 'string' },
            status_label: { type: 'string' },
            date_created: nullable({ type: 'string' }),
            total: { type: 'string' },
            tracking_url: nullable({ type: 'string' }),
            estimated_delivery: nullable({ type: 'string' }),
            admin_url: { type: 'string', format: 'uri' },
          },
        },
      },
    },
  },

  HelpdeskCardAction: {
    type: 'object',
    additionalProperties: false,
    required: ['action', 'label', 'url'],
    description: 'A signed link, made for this agent, customer, subscription and action, used once, for 15 minutes.',
    properties: {
      action: { enum: ['payment_link', 'pause', 'force_activate', 'cancellation_reason'] },
      label: { type: 'string' },
      url: { type: 'string', format: 'uri' },
    },
  },

  CancellationReason: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'title', 'slug'],
    properties: { id: { type: 'integer', description: 'The `cancellation_reason` post\'s ID.' }, title: { type: 'string' }, slug: { type: 'string' } },
  },

  RecordedCancellationReason: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'subscription_id', 'date', 'date_gmt', 'recorded_at', 'reason_id', 'title', 'slug'],
    properties: {
      id: { type: 'integer' },
      subscription_id: { type: 'integer' },
      date: { type: 'string', description: 'In the shop\'s local time, `YYYY-MM-DD HH:MM:SS` (SPEC 2.3 fixes it without a zone: read `recorded_at`).' },
      date_gmt: gmtDateTime,
      recorded_at: { ...nullable(dateTime), description: 'The same moment, ISO 8601 in the shop\'s time zone with its offset.' },
      reason_id: { type: 'integer' },
      title: { type: 'string' },
      slug: { type: 'string' },
    },
  },

  SubscriptionState: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'status', 'next_payment_date', 'auto_reactivation_date'],
    properties: {
      id: { type: 'integer' },
      status: { type: 'string' },
      next_payment_date: nullable(dateTime),
      auto_reactivation_date: nullable(dateTime),
    },
  },

  DiscountScheme: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'label', 'amount_type', 'max', 'decimals'],
    properties: {
      id: { enum: Object.keys(DISCOUNT_SCHEMES) },
      label: { type: 'string' },
      amount_type: { enum: [...new Set(Object.values(DISCOUNT_SCHEMES).map((scheme) => scheme.amount_type))], description: '`currency`: money in the subscription\'s currency; `percent`: a share of the renewal.' },
      max: { ...nullable({ type: 'number' }), description: 'Null when bounded only by the subscription\'s recurring total.' },
      decimals: { ...nullable({ type: 'integer' }), description: 'Null for money, which follows the shop\'s price decimals.' },
    },
  },

  DiscountType: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'slug', 'name', 'description', 'scheme'],
    properties: { id: { type: 'integer' }, slug: { type: 'string' }, name: { type: 'string' }, description: nullable({ type: 'string' }), scheme: ref('DiscountScheme') },
  },

  Discount: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'subscription', 'order', 'type', 'amount', 'currency', 'status', 'applied_amount', 'date_applied_gmt', 'created_via', 'created_by', 'date_created', 'date_created_gmt', 'order_edit_url'],
    properties: {
      id: { type: 'integer' },
      subscription: { type: 'integer' },
      order: nullable({ type: 'integer' }),
      type: { anyOf: [ref('DiscountType'), { type: 'null' }], description: 'Null when the type row names a scheme this version does not know.' },
      amount: decimal,
      currency: { type: 'string' },
      status: { type: 'string', enum: ['pending', 'applied', 'cancelled'], description: 'Pending until the next renewal order carries it (applied, `order` then that order), or cancelled.' },
      applied_amount: { anyOf: [decimal, { type: 'null' }], description: 'What the renewal in `order` was lowered by; null until applied.' },
      date_applied_gmt: nullable({ type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$' }),
      created_via: { type: 'string' },
      created_by: { type: 'integer', description: 'The WordPress user ID of the staff member.' },
      date_created: nullable(dateTime),
      date_created_gmt: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$' },
      order_edit_url: { type: 'string', format: 'uri', description: 'WP admin\'s edit screen of the linked order, else of the subscription.' },
    },
  },

  WebhookAccepted: {
    oneOf: [
      {
        type: 'object', additionalProperties: false, required: ['status', 'id'],
        properties: { status: { const: 'accepted' }, id: { type: 'integer', description: 'The stored webhook\'s ID (`payment-hub webhooks show --id`).' } },
        description: 'Card gateway: stored PENDING, processed by the worker.',
      },
      { type: 'object', additionalProperties: false, required: ['status'], properties: { status: { const: 'duplicate' } }, description: 'Card gateway: this event was stored before; nothing changed.' },
      {
        type: 'object', additionalProperties: false, required: ['status', 'note'],
        properties: { status: { enum: ['PROCESSED', 'SKIPPED'] }, note: { type: 'string' } },
        description: 'Mobile wallet: handled in the request.',
      },
    ],
  },

  ShopOrderNoticeHeard: {
    type: 'object',
    description: 'What the notice came to for the order\'s open charge, as the database has the order. Hearing the same notice again changes nothing more.',
    additionalProperties: false,
    required: ['outcome'],
    properties: {
      outcome: {
        enum: ['withdrawn', 'already_withdrawn', 'nothing_open', 'still_wanted'],
        description: '`withdrawn`: the order no longer awaits payment, so its open charge is withdrawn and its cancel at the provider is on its way (the worker\'s pass '
          + 'confirms it, or asks again should the provider not answer); `already_withdrawn`: its cancel was asked for before (the worker\'s pass, Stop dunning, an '
          + 'earlier notice); `nothing_open`: no charge of the service\'s is open for the order; `still_wanted`: the order still awaits payment, so its charge stays.',
      },
      reason: { type: 'string', description: 'With `withdrawn` and `already_withdrawn`: why the charge is no longer wanted (`order_processing`, `order_cancelled`, `dunning_stopped`, ...).' },
    },
  },

  OrderPayments: {
    type: 'object',
    description: 'What the service knows of one order\'s payments; each list newest first, empty when there is none.',
    additionalProperties: false,
    required: ['order_id', 'payments', 'retries', 'webhooks', 'warnings', 'dunning'],
    properties: {
      order_id: { type: 'integer', minimum: 1 },
      payments: { type: 'array', items: ref('OrderPayment') },
      retries: { type: 'array', items: ref('DunningAttempt'), description: 'The dunning attempts planned or made for the order.' },
      webhooks: { type: 'array', items: ref('OrderWebhook'), description: 'The webhooks stored about the order\'s payments.' },
      warnings: { type: 'array', items: ref('OrderPaymentWarning'), description: 'What staff must act on; empty when nothing.' },
      dunning: { ...nullable(ref('DunningCase')), description: 'The failed renewal\'s story; null when the order has no dunning case.' },
    },
  },

  DunningCase: {
    type: 'object',
    description: 'A failed renewal followed up by dunning: what happened, what happens next and what staff may do now. Every time is ISO 8601 in the shop\'s time zone, with its offset.',
    additionalProperties: false,
    required: ['status', 'provider', 'amount', 'currency', 'failure', 'timeline', 'deadline', 'next', 'actions'],
    properties: {
      status: { enum: ['open', 'recovered', 'lost'] },
      provider: { enum: ['card_gateway', 'mobile_wallet'] },
      amount: { type: 'integer', description: 'The renewal\'s total when it first failed, in the currency\'s minor units (as `payments[].amount`).' },
      currency: { type: 'string' },
      failure: {
        type: 'object',
        additionalProperties: false,
        required: ['reason', 'state', 'at'],
        description: 'The first decline.',
        properties: {
          reason: { type: 'string', description: 'The provider\'s code (e.g. `insufficient_funds`), else the decline\'s state, `unknown` when none was given.' },
          state: nullable({ type: 'string', description: 'The card gateway\'s `error_state` (`soft_declined`, `hard_declined`, `processing_error`).' }),
          at: dateTime,
        },
      },
      timeline: { type: 'array', items: ref('DunningEvent'), description: 'Everything that happened and what is planned, oldest first.' },
      deadline: { ...nullable(dateTime), description: 'When the subscription is cancelled unless the renewal is paid (the customer was asked for a new payment method); null when there is none or the case is closed.' },
      next: {
        description: 'What happens next, while the case is open: the wallet retrying the renewal\'s charge itself until `until` (its `retryDays`; nothing is charged on top), else the next planned attempt, else the deadline; null when nothing is planned.',
        anyOf: [
          { type: 'null' },
          { type: 'object', additionalProperties: false, required: ['event', 'at', 'attempt'], properties: { event: { const: 'attempt' }, at: dateTime, attempt: { type: 'integer', minimum: 1 } } },
          { type: 'object', additionalProperties: false, required: ['event', 'at'], properties: { event: { const: 'deadline' }, at: dateTime } },
          { type: 'object', additionalProperties: false, required: ['event', 'until'], properties: { event: { const: 'wallet_retrying' }, until: dateTime } },
        ],
      },
      actions: {
        type: 'object',
        additionalProperties: false,
        required: ['charge_now', 'payment_link', 'stop_dunning'],
        description: 'What staff may do now (the routes `charge-now`, `payment-link` and `stop-dunning` refuse by the same rule).',
        properties: { charge_now: ref('DunningAction'), payment_link: ref('DunningAction'), stop_dunning: ref('DunningAction') },
      },
    },
  },

  DunningEvent: {
    type: 'object',
    additionalProperties: false,
    required: ['at', 'event'],
    properties: {
      at: dateTime,
      event: {
        enum: ['renewal_failed', 'attempt_planned', 'attempt_succeeded', 'attempt_failed', 'attempt_held', 'attempt_cancelled', 'customer_emailed', 'customer_reminded',
          'recovered', 'lost', 'staff_charged', 'staff_sent_payment_link', 'staff_stopped_dunning'],
        description: '`attempt_planned`: an attempt planned for `at` (or a charge made and awaiting the provider); `attempt_held`: the provider refused the service\'s own request; '
          + '`customer_emailed`: asked for a new payment method; `customer_reminded`: the reminder before the deadline; `staff_*`: what a staff member (`by`) did.',
      },
      attempt: { type: 'integer', minimum: 1, description: 'The attempt\'s number, for `attempt_*` and `staff_charged`.' },
      awaiting: { const: true, description: 'For `attempt_planned`: the attempt is made (or being made) and its charge awaits the provider\'s answer; absent while it is only planned.' },
      reason: { ...nullable({ type: 'string' }), description: 'The provider\'s code, for `renewal_failed` and `attempt_failed`.' },
      state: { ...nullable({ type: 'string' }), description: 'The decline\'s state (e.g. `soft_declined`).' },
      means: { enum: ['service_retry', 'staff_charge', 'new_payment_method', 'provider_retry', 'reconciliation', 'shop_payment'], description: 'For `recovered`: how it was paid.' },
      by: { type: 'string', description: 'The staff member\'s display name, for `staff_*` and a `lost` by staff.' },
      why: { enum: ['payday'], description: 'For `attempt_planned`: why it is planned when it is, besides its plan\'s wait; `payday`: early on the first bank day from payday (DUNNING_PAYDAYS), the decline having been for lack of funds.' },
    },
  },

  DunningAction: {
    type: 'object',
    additionalProperties: false,
    required: ['allowed'],
    properties: {
      allowed: { type: 'boolean' },
      reason: {
        enum: ['case_closed', 'charge_under_way', 'wallet_charge_under_way', 'order_not_awaiting_payment', 'subscription_not_on_hold', 'provider_not_configured',
          'provider_unreachable', 'no_payment_method', 'daily_cap', 'monthly_cap', 'companion_required', 'link_just_sent', 'charge_just_made', 'no_dunning_case'],
        description: 'When not allowed: why, a stable code.',
      },
      not_before: { ...dateTime, description: 'When not allowed: from when it is possible, when that is known (a cap, the wallet\'s own retries, a click just made).' },
    },
  },

  ChargeNowAnswer: staffActionAnswer({
    type: 'object',
    additionalProperties: false,
    required: ['outcome'],
    properties: {
      outcome: { enum: ['paid', 'declined', 'pending', 'held'], description: '`pending`: the charge is made and the provider confirms it later (the wallet\'s), or the provider did not answer and the same attempt is asked again shortly (`reason: provider_unreachable`); `held`: the provider refused the service\'s own request.' },
      reason: { type: 'string', description: 'For `declined`: the provider\'s code; else `provider_unreachable`, `provider_refused_request` or `paid_meanwhile`.' },
    },
  }),

  PaymentLinkAnswer: staffActionAnswer({
    type: 'object',
    additionalProperties: false,
    required: ['outcome', 'change_id'],
    properties: {
      outcome: { const: 'sent', description: 'Handed to WooCommerce, which sends the e-mail and notes it on the subscription.' },
      change_id: { type: 'integer', description: 'The hand-over to WooCommerce that sends it.' },
    },
  }),

  StopDunningAnswer: staffActionAnswer({
    type: 'object',
    additionalProperties: false,
    required: ['outcome', 'attempts_cancelled', 'charges_cancelled', 'charges_not_cancelled_yet'],
    properties: {
      outcome: { const: 'stopped' },
      attempts_cancelled: { type: 'integer', minimum: 0 },
      charges_cancelled: { type: 'integer', minimum: 0, description: 'Charges of the service\'s the provider still held (the wallet\'s PENDING or DUE), cancelled there.' },
      charges_not_cancelled_yet: { type: 'integer', minimum: 0, description: 'Such charges the provider could not be asked to cancel now; reconciliation cancels them later.' },
    },
  }),

  OrderPaymentWarning: {
    type: 'object',
    description: '`captured_twice`: the order was paid twice (one renewal, one payment). `payment_ids` names the payments that took the money, '
      + 'the later one first: that is the one to refund at its provider (`refund`); `kept` is the payment that had already paid the order, '
      + 'null when that was outside the service (the order paid or closed in the shop after which the service withdrew the charge `refund`, which the provider took all the same). '
      + 'Shown until one of the two is refunded; nothing is refunded automatically.',
    additionalProperties: false,
    required: ['code', 'message', 'payment_ids', 'refund', 'kept'],
    properties: {
      code: { enum: ['captured_twice'] },
      message: { type: 'string', description: 'For people, in English (the order note says the same).' },
      payment_ids: { type: 'array', items: { type: 'integer' }, minItems: 1, description: 'The payments (as in `payments`) that took money for the order, the later one first (only `refund` when `kept` is null).' },
      refund: ref('PaymentReference'),
      kept: nullable(ref('PaymentReference')),
    },
  },

  PaymentReference: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'provider', 'external_id', 'amount', 'currency'],
    properties: {
      id: { type: 'integer', description: 'As in `payments`.' },
      provider: { enum: ['card_gateway', 'mobile_wallet'] },
      external_id: { type: 'string' },
      amount: nullable({ type: 'integer', description: 'In the currency\'s minor units.' }),
      currency: nullable({ type: 'string' }),
    },
  },

  OrderPayment: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'provider', 'external_id', 'status', 'amount', 'currency', 'failure_code', 'failure_description', 'failure_state', 'created_at', 'updated_at'],
    properties: {
      id: { type: 'integer' },
      provider: { enum: ['card_gateway', 'mobile_wallet'] },
      external_id: { type: 'string', description: 'The card gateway\'s invoice or charge handle, the wallet\'s charge ID.' },
      status: nullable({ enum: ['AUTHORIZED', 'CAPTURED', 'FAILED', 'REFUNDED', 'CANCELED'] }),
      amount: nullable({ type: 'integer', description: 'In the currency\'s minor units (øre, cents), as the provider gave it and the payments table holds it.' }),
      currency: nullable({ type: 'string' }),
      failure_code: nullable({ type: 'string', description: 'The provider\'s error code of a failed payment.' }),
      failure_description: nullable({ type: 'string' }),
      failure_state: nullable({ type: 'string', description: 'The card gateway\'s `error_state` (`soft_declined`, `hard_declined`, `processing_error`).' }),
      created_at: utcTime,
      updated_at: utcTime,
    },
  },

  DunningAttempt: {
    type: 'object',
    additionalProperties: false,
    required: ['attempt', 'status', 'scheduled_at', 'result'],
    properties: {
      attempt: { type: 'integer', minimum: 1 },
      status: { enum: ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'CANCELED'] },
      scheduled_at: utcTime,
      result: nullable({ type: 'string' }),
    },
  },

  OrderWebhook: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'provider', 'external_id', 'event_type', 'status', 'created_at'],
    properties: {
      id: { type: 'integer', description: 'As `payment-hub webhooks show --id` takes it.' },
      provider: { enum: ['card_gateway', 'mobile_wallet'] },
      external_id: { type: 'string', description: 'The provider\'s event ID.' },
      event_type: { type: 'string' },
      status: { enum: ['PENDING', 'PROCESSED', 'SKIPPED', 'FAILED'] },
      created_at: utcTime,
    },
  },

  ReconcileResult: {
    type: 'object',
    description: 'What `payment-hub reconcile --order=N --json` prints. An item whose provider could not be asked has `outcome: "unreachable"` and its `error`, and is left as it was. '
      + 'Items of a provider that is not configured are not asked about: `skipped` counts them, with what is unset.',
    additionalProperties: false,
    required: ['dry_run', 'scope', 'summary', 'items', 'skipped'],
    properties: {
      dry_run: { type: 'boolean' },
      scope: { anyOf: [{ const: 'all' }, { type: 'object', additionalProperties: false, required: ['order_id'], properties: { order_id: { type: 'integer' } } }] },
      summary: {
        type: 'object',
        additionalProperties: false,
        required: ['checked', 'found', 'changed', 'would_change', 'unreachable'],
        properties: {
          checked: { type: 'integer', minimum: 0, description: 'Items asked about.' },
          found: { type: 'integer', minimum: 0, description: 'Items the provider had news of.' },
          changed: { type: 'integer', minimum: 0 },
          would_change: { type: 'integer', minimum: 0 },
          unreachable: { type: 'integer', minimum: 0, description: 'Items whose provider could not be asked.' },
        },
      },
      items: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'provider', 'id', 'external_id', 'order_id', 'local_status', 'provider_state', 'outcome', 'events', 'notes', 'error'],
          properties: {
            kind: { enum: ['payment', 'agreement', 'order'] },
            provider: { enum: ['card_gateway', 'mobile_wallet'] },
            id: { type: 'integer' },
            external_id: { type: 'string' },
            order_id: nullable({ type: 'integer' }),
            local_status: nullable({ type: 'string' }),
            provider_state: nullable({ type: 'string' }),
            outcome: { enum: ['unchanged', 'would_change', 'changed', 'unreachable'] },
            events: { type: 'array', items: { type: 'string' }, description: 'What the provider said, as its webhooks would have named it.' },
            notes: { type: 'array', items: { type: 'string' }, description: 'What handling each event did.' },
            error: nullable({ type: 'string', description: 'Why the provider could not be asked.' }),
          },
        },
      },
      skipped: {
        type: 'array',
        description: 'Providers not configured here, whose open items were left as they are without asking.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['provider', 'reason', 'items'],
          properties: {
            provider: { enum: ['card_gateway', 'mobile_wallet'] },
            reason: { type: 'string', description: 'What is unset, e.g. `CARD_GATEWAY_API_KEY unset`.' },
            items: { type: 'integer', minimum: 1, description: 'Open items of this provider not asked about.' },
          },
        },
      },
    },
  },

  Health: {
    type: 'object',
    additionalProperties: false,
    required: ['status', 'db', 'redis', 'woocommerce'],
    properties: {
      status: { enum: ['ok', 'unavailable'] },
      db: { enum: ['ok', 'down'] },
      redis: { enum: ['ok', 'down'] },
      woocommerce: {
        description: 'Whether WooCommerce makes the order changes (`companion`) or the service writes them itself; `unknown` when it could not be read in time.',
        anyOf: [
          {
            type: 'object', additionalProperties: false, required: ['mode', 'changes_waiting', 'changes_failed', 'handover_lag_seconds'],
            properties: {
              mode: { enum: ['companion', 'no_companion'] },
              changes_waiting: { type: 'integer', minimum: 0 },
              changes_failed: { type: 'integer', minimum: 0 },
              handover_lag_seconds: { type: 'integer', minimum: 0, description: 'How long the oldest change still waiting for WooCommerce has waited; 0 when none waits.' },
            },
          },
          { const: 'unknown' },
        ],
      },
    },
  },
};
