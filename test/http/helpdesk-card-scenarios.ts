import test from 'ava';
import { ApiDescription } from '../support/api-description';
import { FakeCardGateway, RAISED_LIMITS_ENV, type CardGatewayDeliveryEvent } from '../support/fake-card-gateway';
import { FakeMobileWallet, type MobileWalletDeliveryEvent } from '../support/fake-mobile-wallet';
import { heldByWooCommerce } from '../support/failed-renewals';
import path from 'node:path';
import { request, type TestResponse } from '../support/http-client';
import { renderCardTemplate, screenshotCard } from '../support/helpdesk-card-render';
import { SCREENS_DIR } from '../woocommerce/support/admin-browser';
import { announceCompanion, handleWalletEvent, openHub, processCardGatewayEvent } from '../support/payment-hub-fixture';
import { providerEnvironment } from '../support/provider-environment';
import { openStaffServices } from '../support/staff-api';
import { createTestShop, startApi, type RunningApi, type TestShop, type TestShopOptions } from '../support/test-shop';
import { createCancellationReason, createStaffUser, setUserCapabilities, WP_SECRETS_ENV } from '../support/wordpress-fixtures';
import type { PaymentHub } from '../../src/entry-points/composition/payment-hub';

const CARD_TOKEN = 'helpdesk-card-token-for-tests-0123456789abcdef';
const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const WALLET_WEBHOOK_URL = 'https://sidecar.example.dk/payment-hub/v1/webhook/mobile_wallet';
const WALLET_SECRET = 'wallet-secret-helpdesk-card';

/**
 * Issue 50: the helpdesk's custom card (GET /helpdesk/v1/card) and its action links, against real MariaDB in one
 * storage mode: the match by e-mail, by each form of phone a conversation gives, by both and by neither; guests; a
 * failed renewal on each provider told as the Payments panel tells it; the links an agent who is staff gets, each
 * done once from its confirmation page, and refused when used, expired, altered, foreign or its agent is not staff.
 */
export function helpdeskCardScenarios(name: string, options: TestShopOptions, screenshots = false) {
  let shop: TestShop;
  let api: RunningApi;
  let hub: PaymentHub & { close(): Promise<void> };
  let card: FakeCardGateway;
  let wallet: FakeMobileWallet;
  let description: ApiDescription;
  let now = new Date();
  const clock = () => now;
  const ids: Record<string, number> = {};

  const HTTPS = { 'x-forwarded-proto': 'https' };
  const asDixa = (query: string, headers: Record<string, string> = { ...HTTPS, authorization: `Bearer ${CARD_TOKEN}` }): Promise<TestResponse> =>
    request(api.url, 'GET', `/helpdesk/v1/card${query}`, { headers });
  const cardFor = async (query: string) => {
    const res = await asDixa(query);
    return { res, body: res.json as any };
  };
  /** The card as Dixa gets it, checked against the document, and rendered by the shipped template as Dixa renders it. */
  const checked = async (t: import('ava').ExecutionContext, query: string) => {
    const res = await asDixa(query);
    description.checkResponse(t, 'GET', '/helpdesk/v1/card', res);
    const body = res.json as any;
    const html = await renderCardTemplate(body);
    t.true(html.includes(body.customer ? escapeHtml(body.customer.name) : body.language === 'da' ? 'Ingen kunde fundet' : 'No customer found'), `the template renders ${query}`);
    return body;
  };
  const actionPath = (url: string) => new URL(url).pathname;
  const form = (fields: Record<string, string | string[]>) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(fields)) for (const one of [value].flat()) params.append(key, one);
    return params.toString();
  };
  const post = (url: string, fields: Record<string, string | string[]> = {}) => request(api.url, 'POST', actionPath(url), {
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(form(fields)),
  });
  const linkOf = (body: any, subscriptionId: number, action: string) => {
    const subscription = body.subscriptions.find((s: any) => s.id === subscriptionId);
    return [...subscription.actions, ...(subscription.failed_renewal?.actions ?? [])].find((a: any) => a.action === action)?.url as string | undefined;
  };
  const statusOf = async (id: number) => {
    const [rows] = options.hpos
      ? await shop.db.query(`SELECT status FROM ${shop.prefix}wc_orders WHERE id = ?`, [id])
      : await shop.db.query(`SELECT post_status AS status FROM ${shop.prefix}posts WHERE ID = ?`, [id]);
    return String((rows as any[])[0]?.status).replace(/^wc-/, '');
  };
  const notesOf = async (id: number) => ((await shop.db.query(`SELECT comment_content AS content, comment_author AS author FROM ${shop.prefix}comments WHERE comment_post_ID = ? ORDER BY comment_ID`, [id]))[0] as any[]);

  const address = (first: string, email: string, phone: string) => ({ first_name: first, last_name: 'Hansen', country: 'DK', email, phone, address_1: 'Nørregade 1', city: 'København K', postcode: '1165' });

  test.before(async () => {
    shop = await createTestShop(name, options);
    card = new FakeCardGateway();
    wallet = new FakeMobileWallet();
    await Promise.all([card.start(), wallet.start()]);
    const env = { ...WP_SECRETS_ENV, ...RAISED_LIMITS_ENV, ...providerEnvironment(card, wallet, { url: WALLET_WEBHOOK_URL, secret: WALLET_SECRET }), HELPDESK_CARD_TOKEN: CARD_TOKEN, HELPDESK_THROTTLE_MAX_FAILURES: '3' };
    const config = shop.config(env);
    hub = await openHub(config, clock);
    const s = shop.seeder;

    const agent = await createStaffUser(shop, { login: 'agent', email: 'agent@shop.example.dk', roles: ['shop_manager'], displayName: 'Agnete Agent' });
    ids.agent = agent.id;
    await createStaffUser(shop, { login: 'customer-user', email: 'not-staff@shop.example.dk', roles: ['customer'] });
    ids.reason = await createCancellationReason(shop, 'Too expensive');

    const mette = address('Mette', 'mette@example.dk', '+45 20 12 34 56');
    ids.order1 = await s.createOrder({ status: 'completed', createdGmt: new Date('2026-10-01T08:00:00Z'), total: '199.00', currency: 'DKK', billing: mette, shipping: mette, lineItems: [{ name: 'Kaffe', qty: 1, total: '199.00' }], shipping_lines: [{ methodId: 'dao', title: 'DAO' }] });
    // An active card subscription, its card saved in WooCommerce as the card plugin saves it (WC_Payment_Token of its gateway).
    ids.cardSubscription = await s.createSubscription({
      status: 'active', createdGmt: new Date('2026-10-01T08:00:00Z'), total: '199.00', currency: 'DKK', billing: mette, shipping: mette, parentId: ids.order1,
      paymentMethod: 'reepay_checkout', paymentMethodTitle: 'Frisbii Pay', nextPaymentGmt: new Date('2026-12-01T08:00:00Z'),
      lineItems: [{ name: 'Kaffeabonnement', qty: 2, total: '199.00' }], meta: { _reepay_token: 'ca-mette' },
    });
    const [token] = await shop.db.query(`INSERT INTO ${shop.prefix}woocommerce_payment_tokens (gateway_id, token, user_id, type, is_default) VALUES ('reepay_checkout', 'ca-mette', 0, 'Reepay', 1)`);
    const tokenId = (token as { insertId: number }).insertId;
    for (const [key, value] of Object.entries({ card_type: 'visa', last4: '4242', expiry_month: '10', expiry_year: '2027', masked_card: '457199XXXXXX4242' })) {
      await shop.db.query(`INSERT INTO ${shop.prefix}woocommerce_payment_tokenmeta (payment_token_id, meta_key, meta_value) VALUES (?, ?, ?)`, [tokenId, key, value]);
    }
    // A MobilePay subscription whose renewal failed at the wallet: the service heard it and WooCommerce put it on hold.
    ids.walletSubscription = await s.createSubscription({
      status: 'active', createdGmt: new Date('2026-10-05T08:00:00Z'), total: '99.00', currency: 'DKK', billing: mette, shipping: mette,
      paymentMethod: 'vipps_recurring', paymentMethodTitle: 'MobilePay', lineItems: [{ name: 'Te', qty: 1, total: '99.00' }], meta: { _agreement_id: 'agr-mette' },
    });
    ids.walletRenewal = await s.createOrder({
      status: 'pending', createdGmt: new Date('2026-11-05T08:00:00Z'), total: '99.00', currency: 'DKK', billing: mette, shipping: mette, createdVia: 'subscription',
      meta: { _subscription_renewal: String(ids.walletSubscription), _charge_id: 'chr-mette' },
    });
    wallet.setAgreement('agr-mette');
    wallet.setCharge('agr-mette', 'chr-mette', { status: 'FAILED' });
    const walletEvent = (event: MobileWalletDeliveryEvent) => handleWalletEvent(hub, event, { secret: WALLET_SECRET, url: WALLET_WEBHOOK_URL });
    // The agreement was approved in the app when the subscription began (the wallet's event), then the renewal's charge failed.
    if ((await walletEvent({ eventType: 'recurring.agreement-activated.v1', agreementId: 'agr-mette' } as MobileWalletDeliveryEvent)) !== 'PROCESSED') throw new Error('agreement not activated');
    if ((await walletEvent({ eventType: 'recurring.charge-failed.v1', agreementId: 'agr-mette', chargeId: 'chr-mette' })) !== 'PROCESSED') throw new Error('wallet failure not processed');
    await heldByWooCommerce(shop, ids.walletRenewal, ids.walletSubscription);

    // Per: a card renewal declined for lack of funds (the service plans its retry).
    const per = address('Per', 'per@example.dk', '30303030');
    ids.perSubscription = await s.createSubscription({
      status: 'active', createdGmt: new Date('2026-10-02T08:00:00Z'), total: '149.00', currency: 'DKK', billing: per, shipping: per,
      paymentMethod: 'reepay_checkout', paymentMethodTitle: 'Frisbii Pay', lineItems: [{ name: 'Kaffe', qty: 1, total: '149.00' }], meta: { _reepay_token: 'ca-per' },
    });
    ids.perRenewal = await s.createOrder({
      status: 'pending', createdGmt: new Date('2026-11-02T08:00:00Z'), total: '149.00', currency: 'DKK', billing: per, shipping: per, createdVia: 'subscription',
      meta: { _subscription_renewal: String(ids.perSubscription) },
    });
    card.setPaymentMethod('ca-per', { customer: 'cust-per', state: 'active' });
    card.setCharge(`order-${ids.perRenewal}`, { state: 'failed', amount: 14900, currency: 'DKK', customer: 'cust-per', error: 'insufficient_funds', error_state: 'soft_declined' });
    const cardEvent = (event: CardGatewayDeliveryEvent) => processCardGatewayEvent(hub, event, card.webhookSecret);
    if ((await cardEvent({ event_type: 'invoice_failed', invoice: `order-${ids.perRenewal}` })) !== 'PROCESSED') throw new Error('card failure not processed');
    await heldByWooCommerce(shop, ids.perRenewal, ids.perSubscription);

    // A guest who only ever ordered: six orders, the card lists the last five.
    const guest = address('Gitte', 'gitte@example.dk', '40404040');
    for (let i = 0; i < 6; i += 1) {
      ids[`guest${i}`] = await s.createOrder({ status: 'completed', createdGmt: new Date(`2026-11-0${i + 1}T08:00:00Z`), total: '50.00', currency: 'DKK', billing: guest, shipping: guest, lineItems: [{ name: 'Kage', qty: 1, total: '50.00' }] });
    }

    // The customer index, as the worker keeps it (the lookup's and the card's match go through it).
    const staffServices = await openStaffServices(config);
    await staffServices.refreshCustomerContacts.execute();
    await staffServices.close();
    api = await startApi(config, undefined, clock);
    description = new ApiDescription((await request(api.url, 'GET', '/openapi.json')).json);
  });

  test.after.always(async () => {
    await api?.stop();
    await hub?.close();
    await Promise.allSettled([card?.stop(), wallet?.stop()]);
    await shop?.drop();
  });

  test.serial('By e-mail: the customer, each subscription in words (status, products, total, next payment, the card or the agreement), the wallet renewal\'s failure as the Payments panel tells it, the last orders, and the staff agent\'s links', async (t) => {
    const body = await checked(t, `?email=${encodeURIComponent('Mette@Example.dk')}&phone=&agent=${encodeURIComponent('agent@shop.example.dk')}`);
    t.is(body.language, 'da', 'the shop\'s staff language (WPLANG da_DK)');
    t.deepEqual(body.customer, { name: 'Mette Hansen', email: 'mette@example.dk', phone: '+4520123456' });
    t.deepEqual(body.subscriptions.map((s: any) => s.id), [ids.walletSubscription, ids.cardSubscription], 'newest first');
    const [walletOne, cardOne] = body.subscriptions;
    t.like(cardOne, { status: 'active', status_label: 'Aktiv', products: 'Kaffeabonnement × 2', payment_method: 'Visa •••• 4242, udløber 10/27', failed_renewal: null });
    t.regex(cardOne.total, /199[.,]00/);
    t.regex(cardOne.next_payment, /december 2026/);
    t.deepEqual(cardOne.actions.map((a: any) => a.action), ['pause', 'cancellation_reason']);
    t.like(walletOne, { status: 'on-hold', status_label: 'I bero', payment_method: 'MobilePay, aftalen er aktiv' });
    t.is(walletOne.failed_renewal.order_id, ids.walletRenewal);
    t.regex(walletOne.failed_renewal.headline, new RegExp(`^Fornyelse #${ids.walletRenewal} mislykkedes .*: `));
    t.true(walletOne.failed_renewal.next.length > 0);
    t.deepEqual(walletOne.actions.map((a: any) => a.action), ['pause', 'force_activate', 'cancellation_reason']);
    for (const action of [...walletOne.actions, ...cardOne.actions]) t.regex(action.url, /^https:\/\/[^/]+\/helpdesk\/v1\/card\/actions\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    t.deepEqual(body.orders.map((o: any) => o.number), [String(ids.walletRenewal), String(ids.order1)]);
    t.like(body.orders[1], { status_label: 'Gennemført', tracking_url: null });
    t.regex(body.orders[1].admin_url, new RegExp(`${ids.order1}`));
  });

  test.serial('By phone, in each form a conversation gives (E.164, national, spaced, dashed, with 00): the same customer; by both, the e-mail decides; by neither, no customer', async (t) => {
    for (const phone of ['+4520123456', '20123456', '20 12 34 56', '20-12-34-56', '004520123456', '+45 20 12 34 56']) {
      const body = await checked(t, `?phone=${encodeURIComponent(phone)}`);
      t.is(body.customer?.email, 'mette@example.dk', phone);
    }
    t.is((await checked(t, `?email=per%40example.dk&phone=${encodeURIComponent('+4520123456')}`)).customer.email, 'per@example.dk', 'the e-mail first');
    t.is((await checked(t, `?email=nobody%40example.dk&phone=30303030`)).customer.email, 'per@example.dk', 'the phone when the e-mail matches nobody');
    for (const query of ['', '?email=&phone=&agent=', '?email=nobody%40example.dk', '?phone=99999999']) {
      t.deepEqual(await checked(t, query), { language: 'da', customer: null, subscriptions: [], orders: [] }, query);
    }
  });

  test.serial('A guest who only ordered: found with the last five orders, newest first; the card renewal declined for lack of funds tells what happened and what comes next', async (t) => {
    const guest = await checked(t, '?email=gitte%40example.dk');
    t.is(guest.customer.name, 'Gitte Hansen');
    t.deepEqual(guest.subscriptions, []);
    t.deepEqual(guest.orders.map((o: any) => o.number), [5, 4, 3, 2, 1].map((i) => String(ids[`guest${i}`])));
    const per = await checked(t, '?phone=30303030&agent=agent%40shop.example.dk');
    const [subscription] = per.subscriptions;
    t.is(subscription.payment_method, 'Kort (Frisbii)', 'no card saved in WooCommerce: the gateway named');
    t.regex(subscription.failed_renewal.headline, /ikke penge nok på kortet/);
    t.regex(subscription.failed_renewal.next, /^(Næste forsøg|Ikke flere forsøg)/);
    // In an English-speaking shop, the same card in English.
    await shop.db.query(`UPDATE ${shop.prefix}options SET option_value = '' WHERE option_name = 'WPLANG'`);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const english = await checked(t, '?phone=30303030');
      t.is(english.language, 'en');
      t.like(english.subscriptions[0], { status_label: 'On hold', payment_method: 'Card (Frisbii)' });
      t.regex(english.subscriptions[0].failed_renewal.headline, new RegExp(`^Renewal #${ids.perRenewal} failed .*: not enough money on the card`));
    } finally {
      await shop.db.query(`UPDATE ${shop.prefix}options SET option_value = 'da_DK' WHERE option_name = 'WPLANG'`);
      await new Promise((resolve) => setTimeout(resolve, 1100));
    }
  });

  test.serial('An agent who is not shop staff, or unknown, or no agent at all: the same card without a single link', async (t) => {
    for (const agent of ['not-staff%40shop.example.dk', 'stranger%40example.dk', '']) {
      const body = await checked(t, `?email=mette%40example.dk&agent=${agent}`);
      t.is(body.customer.email, 'mette@example.dk');
      t.deepEqual(body.subscriptions.flatMap((s: any) => [...s.actions, ...(s.failed_renewal?.actions ?? [])]), [], agent);
    }
  });

  test.serial('The route\'s real answers through the shipped template, as Dixa renders it (a Liquid engine), seen in Chromium in a sandboxed iframe: the customer, the failed renewal\'s story and the links in Danish; no customer; the English card', async (t) => {
    const shots = screenshots ? path.resolve(__dirname, '../../../docs/screenshots') : SCREENS_DIR;
    const danish = await checked(t, '?email=mette%40example.dk&agent=agent%40shop.example.dk');
    const html = await renderCardTemplate(danish);
    for (const action of danish.subscriptions.flatMap((s: any) => s.actions)) t.true(html.includes(`href="${action.url}"`), action.action);
    const seen = (await screenshotCard(html, path.join(shots, 'helpdesk-card-da.png'))).text;
    for (const text of ['Mette Hansen', 'Abonnementer', 'I bero', 'Visa •••• 4242, udløber 10/27', 'MobilePay, aftalen er aktiv', danish.subscriptions[0].failed_renewal.headline, 'Sæt på pause', 'Aktivér']) {
      t.true(seen.toLowerCase().includes(text.toLowerCase()), `the agent reads "${text}"`);
    }
    const none = (await screenshotCard(await renderCardTemplate(await checked(t, '?email=nobody%40example.dk')), path.join(shots, 'helpdesk-card-none-da.png'))).text;
    t.regex(none, /Ingen kunde fundet/);
    await shop.db.query(`UPDATE ${shop.prefix}options SET option_value = '' WHERE option_name = 'WPLANG'`);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const english = await checked(t, '?phone=30303030&agent=agent%40shop.example.dk');
      const read = (await screenshotCard(await renderCardTemplate(english), path.join(shots, 'helpdesk-card-en.png'))).text;
      for (const text of ['Per Hansen', 'Subscriptions', 'On hold', english.subscriptions[0].failed_renewal.headline, 'Activate']) t.true(read.toLowerCase().includes(text.toLowerCase()), `the agent reads "${text}"`);
    } finally {
      await shop.db.query(`UPDATE ${shop.prefix}options SET option_value = 'da_DK' WHERE option_name = 'WPLANG'`);
      await new Promise((resolve) => setTimeout(resolve, 1100));
    }
  });

  test.serial('A pause from the card: its confirmation page asks for the end date; a form without one is refused and the link kept; the pause is done once, noted as the agent\'s "via Dixa"; the same link again is 410', async (t) => {
    const body = await checked(t, '?email=mette%40example.dk&agent=agent%40shop.example.dk');
    const url = linkOf(body, ids.cardSubscription, 'pause')!;
    const page = await request(api.url, 'GET', actionPath(url));
    description.checkResponse(t, 'GET', '/helpdesk/v1/card/actions/{token}', page);
    t.is(page.status, 200);
    t.regex(page.text, /type="date" id="end_date" name="end_date"/);
    t.regex(String(page.headers['content-security-policy']), /default-src 'none'/);
    t.is(await statusOf(ids.cardSubscription), 'active', 'opening the page changes nothing');
    const missing = await post(url);
    t.is(missing.status, 400);
    const endDate = new Date(now.getTime() + 20 * 86_400_000).toISOString().slice(0, 10);
    const done = await post(url, { end_date: endDate });
    description.checkResponse(t, 'POST', '/helpdesk/v1/card/actions/{token}', done);
    t.is(done.status, 200, done.text);
    t.regex(done.text, new RegExp(`Udført: Sæt på pause, abonnement #${ids.cardSubscription}`));
    t.is(await statusOf(ids.cardSubscription), 'on-hold');
    t.true((await notesOf(ids.cardSubscription)).some((note) => /Agnete Agent \(agent\) via Dixa/.test(note.content)), 'the note names the agent, via Dixa');
    const again = await post(url, { end_date: endDate });
    t.is(again.status, 410);
    t.is((await request(api.url, 'GET', actionPath(url))).status, 410, 'its page says it was used');
  });

  test.serial('Two clicks on one link at once: the action is done once', async (t) => {
    const body = await checked(t, '?email=mette%40example.dk&agent=agent%40shop.example.dk');
    const url = linkOf(body, ids.cardSubscription, 'cancellation_reason')!;
    const answers = await Promise.all([1, 2, 3].map(() => post(url, { reason_post_ids: String(ids.reason) })));
    t.deepEqual(answers.map((a) => a.status).sort(), [200, 410, 410]);
    const [rows] = await shop.db.query(`SELECT COUNT(*) AS n FROM ${shop.prefix}sidecar_subscription_cancellation_reasons WHERE subscription_id = ?`, [ids.cardSubscription]);
    t.is(Number((rows as any[])[0].n), 1, 'recorded once');
  });

  test.serial('Refused links change nothing: expired (15 minutes), altered, bound to another subscription, or its agent no longer staff', async (t) => {
    const body = await checked(t, '?email=mette%40example.dk&agent=agent%40shop.example.dk');
    const url = linkOf(body, ids.walletSubscription, 'force_activate')!;
    const token = url.split('/').pop()!;
    const [payload, signature] = token.split('.');
    const flipped = `${payload}.${signature!.slice(0, -1)}${signature!.endsWith('A') ? 'B' : 'A'}`;
    t.is((await request(api.url, 'GET', `/helpdesk/v1/card/actions/${flipped}`)).status, 403, 'a changed signature');
    const fields = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
    fields[2] = ids.cardSubscription;
    const foreign = `${Buffer.from(JSON.stringify(fields)).toString('base64url')}.${signature}`;
    const refused = await request(api.url, 'POST', `/helpdesk/v1/card/actions/${foreign}`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from('') });
    description.checkResponse(t, 'POST', '/helpdesk/v1/card/actions/{token}', refused);
    t.is(refused.status, 403, 'another subscription');
    await setUserCapabilities(shop, ids.agent, { customer: true });
    try {
      t.is((await post(url)).status, 403, 'the agent is no longer staff');
    } finally {
      await setUserCapabilities(shop, ids.agent, { shop_manager: true });
    }
    const was = now;
    now = new Date(now.getTime() + 15 * 60_000 + 1000);
    try {
      t.is((await request(api.url, 'GET', actionPath(url))).status, 410, 'expired');
      t.is((await post(url)).status, 410, 'expired');
    } finally {
      now = was;
    }
    t.is(await statusOf(ids.walletSubscription), 'on-hold', 'nothing was activated');
    const done = await post(url);
    t.is(done.status, 200, done.text);
    t.is(await statusOf(ids.walletSubscription), 'active', 'the same link, still good, activates it');
  });

  test.serial('The payment link from the card, with the companion in WordPress: offered on the failed renewal, sent once as the Payments panel sends it, its note the agent\'s "via Dixa"', async (t) => {
    await announceCompanion(shop, true, 5);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    try {
      const body = await checked(t, '?phone=30303030&agent=agent%40shop.example.dk');
      const url = linkOf(body, ids.perSubscription, 'payment_link');
      t.truthy(url, 'offered on the failed renewal');
      t.true(body.subscriptions[0].failed_renewal.actions.some((a: any) => a.action === 'payment_link'));
      const done = await post(url!);
      t.is(done.status, 200, done.text);
      const [changes] = await shop.db.query(`SELECT op, payload FROM ${shop.prefix}sidecar_woocommerce_changes WHERE object_id = ? ORDER BY id`, [ids.perRenewal]);
      const notes = (changes as any[]).filter((change) => change.op === 'order_note').map((change) => JSON.parse(String(change.payload)).note);
      t.true(notes.some((note: string) => /Agnete Agent via Dixa/.test(note)), JSON.stringify(notes));
      t.is((await post(url!)).status, 410);
    } finally {
      await announceCompanion(shop, false);
    }
  });

  test.serial('With HELPDESK_CARD_ALLOW_FROM, only those addresses get the card (behind a trusted proxy, the address it forwards for); others get 403 before the token is looked at', async (t) => {
    const limited = await startApi(shop.config({ ...WP_SECRETS_ENV, HELPDESK_CARD_TOKEN: CARD_TOKEN, HELPDESK_CARD_ALLOW_FROM: '52.17.249.106,203.0.113.0/24' }), undefined, clock);
    try {
      const ask = (headers: Record<string, string>) => request(limited.url, 'GET', '/helpdesk/v1/card?email=mette%40example.dk', { headers: { ...HTTPS, authorization: `Bearer ${CARD_TOKEN}`, ...headers } });
      const refused = await ask({});
      description.checkResponse(t, 'GET', '/helpdesk/v1/card', refused);
      t.is(refused.status, 403, 'this machine is not Dixa');
      t.is((await ask({ 'x-forwarded-for': '198.51.100.7' })).status, 403);
      t.is((await ask({ 'x-forwarded-for': '52.17.249.106' })).status, 200, 'one of Dixa\'s addresses, through the proxy');
      t.is((await ask({ 'x-forwarded-for': '203.0.113.9' })).status, 200, 'a range');
    } finally {
      await limited.stop();
    }
  });

  test.serial('Only Dixa with the card\'s token, over HTTPS: no token, a wrong one, the helpdesk\'s Basic key or plain HTTP are 401, and after 3 failures the address is blocked (429)', async (t) => {
    t.is((await asDixa('?email=mette%40example.dk', { authorization: `Bearer ${CARD_TOKEN}` })).status, 401, 'not HTTPS');
    for (const headers of [{ ...HTTPS }, { ...HTTPS, authorization: 'Bearer wrong' }, { ...HTTPS, authorization: 'Basic aGVscGRlc2s6c2VjcmV0' }]) {
      const res = await asDixa('?email=mette%40example.dk', headers);
      description.checkResponse(t, 'GET', '/helpdesk/v1/card', res);
      t.is(res.status, 401);
    }
    const blocked = await asDixa('?email=mette%40example.dk', { ...HTTPS, authorization: 'Bearer wrong-again' });
    t.is(blocked.status, 429);
    t.truthy(blocked.headers['retry-after']);
    t.is((await asDixa('?email=mette%40example.dk')).status, 429, 'the address is blocked, whatever it sends');
    await shop.db.query('SELECT 1');
    t.pass();
  });
}
