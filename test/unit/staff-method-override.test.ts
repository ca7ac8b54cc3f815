import test from 'ava';
import type { Request, Response } from 'restify';
import { arrivalMethod, staffMethodOverride } from '../../src/entry-points/http/method-override.js';
import { isoFromGmt } from '../../src/shop/shop-time.js';

/** The method a request is routed with after the pre handler, and the one it arrived with. */
function routed(method: string, url: string, override?: string | string[]): { method: string; arrived: string } {
  const req = { method, url, headers: override === undefined ? {} : { 'x-http-method-override': override } } as unknown as Request;
  let nexted = false;
  staffMethodOverride(req, {} as Response, (() => { nexted = true; }) as never);
  if (!nexted) throw new Error('next was not called');
  return { method: req.method!, arrived: arrivalMethod(req) };
}

test('A POST with X-HTTP-Method-Override DELETE, PUT or PATCH (any case) to a staff route is routed as that method', (t) => {
  t.deepEqual(routed('POST', '/renewal-discounts/v1/discounts/5', 'DELETE'), { method: 'DELETE', arrived: 'POST' });
  t.is(routed('POST', '/renewal-discounts/v1/discounts/5?_locale=user', 'delete').method, 'DELETE');
  t.is(routed('POST', '/subscription-support/v1/subscription/9/pause', ' Put ').method, 'PUT');
  t.is(routed('POST', '/payment-hub/v1/orders/12/payments', 'PATCH').method, 'PATCH');
  t.is(routed('POST', '/payment-hub/v1/orders/12/reconcile', ['DELETE', 'PUT']).method, 'DELETE');
});

test('Any other method, value or path is left as it came', (t) => {
  t.deepEqual(routed('GET', '/renewal-discounts/v1/discounts/5', 'DELETE'), { method: 'GET', arrived: 'GET' });
  t.is(routed('PUT', '/renewal-discounts/v1/discounts/5', 'DELETE').method, 'PUT');
  for (const value of ['GET', 'HEAD', 'OPTIONS', 'POST', 'TRACE', '', 'DELETE, PUT']) t.is(routed('POST', '/renewal-discounts/v1/discounts/5', value).method, 'POST', value);
  t.is(routed('POST', '/renewal-discounts/v1/discounts/5').method, 'POST');
  for (const path of ['/helpdesk/v1/order-status', '/payment-hub/v1/webhook/card_gateway', '/shop/v3/helpdesk/v1/list', '/x/renewal-discounts/v1/discounts/5']) {
    t.is(routed('POST', path, 'DELETE').method, 'POST', path);
  }
});

test('A stored UTC datetime(3) becomes ISO 8601 with Z; anything else is left as it is', (t) => {
  t.is(isoFromGmt('2026-03-01 10:00:00.000'), '2026-03-01T10:00:00.000Z');
  t.is(isoFromGmt('2026-03-01 10:00:00.5'), '2026-03-01T10:00:00.500Z');
  t.is(isoFromGmt('not a time'), 'not a time');
});
