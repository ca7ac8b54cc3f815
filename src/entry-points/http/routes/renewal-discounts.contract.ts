/** Renewal discounts' routes (SPEC 4.4): the types, and discounts listed, created, read and cancelled. */
import { Type } from '@sinclair/typebox';
import { DECIMAL_DIGITS } from '../../../renewal-discounts/discount-schemes';
import { MAX_CREATED_VIA } from '../../../renewal-discounts/renewal-discounts.use-case';
import { ref } from '../contract/answers';
import { bodyId, error, invalidBody, json, METHOD_OVERRIDE_NOTE, notFound, paging, pathId, queryId, staff, tooLarge } from '../contract/operation-docs';
import { defineRoute } from '../contract/route-contract';

export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 100;

const discountParams = { id: pathId('The discount\'s ID.', 'discount_not_found') };
const discountNotFound = notFound('discount_not_found');

export const discountTypesContract = defineRoute({
  method: 'get',
  path: '/renewal-discounts/v1/renewal-discount-types',
  operation: staff('discounts', {
    operationId: 'listDiscountTypes',
    summary: 'Discount types with their scheme',
    responses: { 200: { description: 'The types.', content: json({ type: 'array', items: ref('DiscountType') }) } },
  }),
});

export const discountsContract = defineRoute({
  method: 'get',
  path: '/renewal-discounts/v1/discounts',
  query: Type.Object({
    subscription: queryId('Only this subscription\'s discounts.'),
    order: queryId('Only the discounts linked to this order.'),
    ...paging(MAX_PER_PAGE, DEFAULT_PER_PAGE),
  }),
  operation: staff('discounts', {
    operationId: 'listDiscounts',
    summary: 'Discounts, newest first, a page at a time',
    responses: {
      200: {
        description: 'One page of discounts.',
        headers: {
          'X-WP-Total': { description: 'How many discounts match.', schema: { type: 'integer' } },
          'X-WP-TotalPages': { description: 'How many pages of `per_page` that makes.', schema: { type: 'integer' } },
        },
        content: json({ type: 'array', items: ref('Discount') }),
      },
      400: error(400, ['invalid_params'], '`data.params` names each parameter that is not plain digits within its range (an ID from 1; `page` from 1; `per_page` from 1 to its maximum).'),
    },
  }),
});

export const createDiscountContract = defineRoute({
  method: 'post',
  path: '/renewal-discounts/v1/discounts',
  body: {
    required: true,
    schema: Type.Object({
      subscription: bodyId('A subscription of the shop that still renews.'),
      type: bodyId('A discount type ID (`GET /renewal-discounts/v1/renewal-discount-types`).'),
      amount: Type.Union([
        Type.Number({ exclusiveMinimum: 0 }),
        Type.String({ pattern: `^\\s*${DECIMAL_DIGITS}\\s*$` }),
      ], { description: 'Positive; a percentage at most 100 with at most two decimals, money at most the recurring total with the shop\'s price decimals.' }),
      created_via: Type.Optional(Type.Union([
        Type.String({ minLength: 1, maxLength: MAX_CREATED_VIA, pattern: '\\S' }),
        Type.Null(),
      ], { description: 'Where the discount was made; default `rest`.' })),
      order: Type.Optional(Type.Union([bodyId('An order ID.'), Type.Null()], { description: 'The subscription\'s parent or one of its renewal orders.' })),
    }),
  },
  operation: staff('discounts', {
    operationId: 'createDiscount',
    summary: 'A pending discount on a subscription\'s next renewal',
    responses: {
      201: { description: 'The discount created.', content: json(ref('Discount')) },
      400: invalidBody('A missing or malformed field, an amount out of bounds, or a `subscription`/`order` that names none of the shop\'s (then nothing is stored)'),
      409: error(409, ['invalid_state'], 'The subscription no longer renews (`data.subscription_status`).'),
      413: tooLarge,
    },
  }),
});

export const discountContract = defineRoute({
  method: 'get',
  path: '/renewal-discounts/v1/discounts/{id}',
  params: discountParams,
  operation: staff('discounts', {
    operationId: 'getDiscount',
    summary: 'One discount',
    responses: { 200: { description: 'The discount.', content: json(ref('Discount')) }, 404: discountNotFound },
  }),
});

export const cancelDiscountContract = defineRoute({
  method: 'delete',
  path: '/renewal-discounts/v1/discounts/{id}',
  params: discountParams,
  operation: staff('discounts', {
    operationId: 'cancelDiscount',
    summary: 'Cancels a pending discount, so no renewal carries it',
    description: METHOD_OVERRIDE_NOTE,
    responses: {
      200: { description: 'The discount, now cancelled.', content: json(ref('Discount')) },
      404: discountNotFound,
      409: error(409, ['invalid_state'], 'The discount is applied or cancelled already.'),
    },
  }),
});
