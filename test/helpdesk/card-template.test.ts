import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Liquid } from 'liquidjs';
import { cardTemplatePath, readCardTemplate } from '../../src/helpdesk-card/card-template';
import { paymentHub } from '../support/cli-process';
import { renderCardTemplate, screenshotCard } from '../support/helpdesk-card-render';
import { SCREENS_DIR } from '../woocommerce/support/admin-browser';

// The helpdesk card's template (src/helpdesk-card/card-template.liquid) with hand-made answers of
// GET /helpdesk/v1/card in both languages: the rendered HTML, and what an agent reads of it in chromium, in a
// sandboxed iframe of the sidebar's width. The screenshots docs/helpdesk-card.md shows are made from the route's real
// answers (test/http/helpdesk-card-scenarios.ts); these go to test-artifacts/screens.

const ROOT = path.resolve(__dirname, '../../..');
const ACTIONS = 'https://sidecar.example.dk/helpdesk/v1/card/actions';
const ADMIN = 'https://shop.example.dk/wp-admin/post.php';

interface Words {
  language: 'da' | 'en';
  active: string;
  onHold: string;
  visa: string;
  mastercard: string;
  mobilePay: string;
  headline: string;
  next: string;
  pause: string;
  paymentLink: string;
  forceActivate: string;
  cancellationReason: string;
  processing: string;
  completed: string;
}

const ENGLISH: Words = {
  language: 'en', active: 'Active', onHold: 'On hold',
  visa: 'Visa •••• 4242, expires 10/27', mastercard: 'Mastercard •••• 5454, expires 01/26', mobilePay: 'MobilePay, agreement active',
  headline: 'The payment failed: insufficient funds', next: 'Next attempt 1 December at 08:00',
  pause: 'Pause', paymentLink: 'Send payment link', forceActivate: 'Activate without payment', cancellationReason: 'Record cancellation reason',
  processing: 'Processing', completed: 'Completed',
};

const DANISH: Words = {
  language: 'da', active: 'Aktiv', onHold: 'I venteposition',
  visa: 'Visa •••• 4242, udløber 10/27', mastercard: 'Mastercard •••• 5454, udløber 01/26', mobilePay: 'MobilePay, aftale aktiv',
  headline: 'Betalingen mislykkedes: for få penge på kontoen', next: 'Næste forsøg 1. december kl. 08:00',
  pause: 'Sæt på pause', paymentLink: 'Send betalingslink', forceActivate: 'Aktivér uden betaling', cancellationReason: 'Notér opsigelsesårsag',
  processing: 'Behandles', completed: 'Gennemført',
};

/** The template's own words, as each language has them. */
const HEADINGS = {
  en: { subscriptions: 'Subscriptions', orders: 'Orders', nextPayment: 'Next payment', paymentMethod: 'Payment method', failedRenewal: 'Failed renewal', tracking: 'Tracking', estimatedDelivery: 'Estimated delivery', openAdmin: 'Open in WP admin', noCustomer: 'No customer found' },
  da: { subscriptions: 'Abonnementer', orders: 'Ordrer', nextPayment: 'Næste betaling', paymentMethod: 'Betalingsmetode', failedRenewal: 'Mislykket fornyelse', tracking: 'Sporing', estimatedDelivery: 'Forventet levering', openAdmin: 'Åbn i WP admin', noCustomer: 'Ingen kunde fundet' },
};

const action = (kind: string, label: string, token: string) => ({ action: kind, label, url: `${ACTIONS}/${token}` });

/** A customer with an active card subscription, one on hold after a failed renewal, one paid by MobilePay, and two orders. */
function answer(w: Words) {
  return {
    language: w.language,
    customer: { name: 'Mette Hansen', email: 'mette.hansen@example.dk', phone: '+4512345678' },
    subscriptions: [
      {
        id: 123, status: 'active', status_label: w.active, products: w.language === 'da' ? 'Kaffebønner 1 kg × 2, Filterposer' : 'Coffee beans 1 kg × 2, Filter papers',
        total: 'kr. 199,00', next_payment: '3. december 2026 08:00', payment_method: w.visa, failed_renewal: null,
        actions: [action('pause', w.pause, 'tok-pause-123')], admin_url: `${ADMIN}?post=123&action=edit`,
      },
      {
        id: 124, status: 'on-hold', status_label: w.onHold, products: w.language === 'da' ? 'Tesmagekasse' : 'Tea sampler',
        total: 'kr. 149,00', next_payment: null, payment_method: w.mastercard,
        failed_renewal: { order_id: 456, headline: w.headline, next: w.next, actions: [action('payment_link', w.paymentLink, 'tok-link-456')] },
        actions: [action('force_activate', w.forceActivate, 'tok-activate-124'), action('cancellation_reason', w.cancellationReason, 'tok-reason-124')],
        admin_url: `${ADMIN}?post=124&action=edit`,
      },
      {
        id: 125, status: 'active', status_label: w.active, products: w.language === 'da' ? 'Chokoladeæske' : 'Chocolate box',
        total: 'kr. 99,00', next_payment: '10. december 2026 08:00', payment_method: w.mobilePay, failed_renewal: null,
        actions: [action('pause', w.pause, 'tok-pause-125')], admin_url: `${ADMIN}?post=125&action=edit`,
      },
    ],
    orders: [
      {
        number: '1042', status_label: w.processing, date_created: '28. november 2026', total: 'kr. 249,00',
        tracking_url: 'https://tracking.example.dk/parcel?id=00370123456789&lang=da', estimated_delivery: '2026-12-02', admin_url: `${ADMIN}?post=1042&action=edit`,
      },
      {
        number: '1038', status_label: w.completed, date_created: '2. november 2026', total: 'kr. 199,00',
        tracking_url: null, estimated_delivery: null, admin_url: `${ADMIN}?post=1038&action=edit`,
      },
    ],
  };
}

const noCustomer = (language: 'da' | 'en') => ({ language, customer: null, subscriptions: [], orders: [] });

/** `text` with the entities the escape filter writes (liquidjs and Liqp write some differently) turned back into characters. */
function unescaped(text: string): string {
  return text.replace(/&quot;|&#0*34;|&#x0*22;/gi, '"').replace(/&#0*39;|&#x0*27;/gi, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

interface Link {
  href: string;
  target: string | undefined;
  rel: string | undefined;
  text: string;
}

/** Every link of the rendered card, its attributes and its text unescaped. */
function linksOf(html: string): Link[] {
  return [...html.matchAll(/<a\s([^>]*)>([\s\S]*?)<\/a>/g)].map(([, attributes, inner]) => {
    const attribute = (name: string) => {
      const found = new RegExp(`\\b${name}="([^"]*)"`).exec(attributes);
      return found ? unescaped(found[1]) : undefined;
    };
    return { href: attribute('href') ?? '', target: attribute('target'), rel: attribute('rel'), text: unescaped(inner).trim() };
  });
}

/** The rendered card shows every value of the answer, each action as a link that opens in a new tab. */
function checkCardHtml(t: import('ava').ExecutionContext, html: string, w: Words) {
  const words = HEADINGS[w.language];
  t.true(html.includes(`<html lang="${w.language}">`));
  for (const heading of [words.subscriptions, words.orders, words.nextPayment, words.paymentMethod, words.failedRenewal, words.tracking, words.estimatedDelivery, words.openAdmin]) {
    t.true(html.includes(heading), `heading ${heading}`);
  }
  t.false(html.includes(words.noCustomer));
  const other = HEADINGS[w.language === 'da' ? 'en' : 'da'];
  for (const heading of [other.subscriptions, other.nextPayment, other.paymentMethod, other.failedRenewal, other.openAdmin]) {
    t.false(html.includes(heading), `no ${heading} in a card in ${w.language}`);
  }

  const links = linksOf(html);
  const byText = (text: string) => links.filter((link) => link.text === text);
  for (const [label, token] of [[w.pause, 'tok-pause-123'], [w.paymentLink, 'tok-link-456'], [w.forceActivate, 'tok-activate-124'], [w.cancellationReason, 'tok-reason-124'], [w.pause, 'tok-pause-125']]) {
    const link = byText(label).find((one) => one.href === `${ACTIONS}/${token}`);
    t.truthy(link, `the action ${label} links to ${token}`);
  }
  t.is(links.filter((link) => link.href.startsWith(`${ACTIONS}/`)).length, 5);
  t.deepEqual(links.filter((link) => link.href.startsWith(ADMIN)).map((link) => link.href), [
    `${ADMIN}?post=123&action=edit`, `${ADMIN}?post=124&action=edit`, `${ADMIN}?post=125&action=edit`, `${ADMIN}?post=1042&action=edit`, `${ADMIN}?post=1038&action=edit`,
  ]);
  t.true(html.includes(`href="${ADMIN}?post=123&amp;action=edit"`), 'an & in a URL is escaped in the attribute');
  t.deepEqual(links.filter((link) => link.href.startsWith('https://tracking.')).map((link) => link.href), ['https://tracking.example.dk/parcel?id=00370123456789&lang=da']);
  for (const link of links) {
    t.is(link.target, '_blank', `${link.text} opens in a new tab`);
    t.is(link.rel, 'noopener', `${link.text}: rel=noopener`);
  }
}

/** What the agent reads: every heading in the answer's language, each subscription and order with its details. */
function checkCardText(t: import('ava').ExecutionContext, text: string, w: Words) {
  const words = HEADINGS[w.language];
  const upper = text.toUpperCase();
  // The section headings and the failed renewal's title are set in capitals by CSS; innerText gives them so.
  for (const heading of [words.subscriptions, words.orders, words.failedRenewal]) t.true(upper.includes(heading.toUpperCase()), `heading ${heading}`);
  for (const label of [words.nextPayment, words.paymentMethod, words.tracking, words.estimatedDelivery, words.openAdmin]) t.true(text.includes(label), `label ${label}`);
  for (const value of ['Mette Hansen', 'mette.hansen@example.dk', '+4512345678', w.active, w.onHold, w.visa, w.mastercard, w.mobilePay,
    w.headline, w.next, w.pause, w.paymentLink, w.forceActivate, w.cancellationReason, '#123', '#124', '#125', 'kr. 199,00', 'kr. 149,00',
    '3. december 2026 08:00', '#456', '#1042', '#1038', w.processing, w.completed, '28. november 2026', '2026-12-02']) {
    t.true(text.includes(value), `the card shows ${value}`);
  }
  t.false(text.includes(words.noCustomer));
}

test('The English card: headings in English, each subscription with its status, method, failed renewal and actions, the orders with tracking', async (t) => {
  const html = await renderCardTemplate(answer(ENGLISH));
  checkCardHtml(t, html, ENGLISH);
  const { text } = await screenshotCard(html, path.join(SCREENS_DIR, 'helpdesk-card-template-en.png'));
  checkCardText(t, text, ENGLISH);
});

test('The Danish card: the template\'s own words in Danish, the answer\'s texts as they come', async (t) => {
  const html = await renderCardTemplate(answer(DANISH));
  checkCardHtml(t, html, DANISH);
  const { text } = await screenshotCard(html, path.join(SCREENS_DIR, 'helpdesk-card-template-da.png'));
  checkCardText(t, text, DANISH);
});

test('No customer: the card says no customer was found, in the answer\'s language, and nothing else', async (t) => {
  const english = await renderCardTemplate(noCustomer('en'));
  t.deepEqual(linksOf(english), []);
  t.false(english.includes('Subscriptions'));
  const seen = await screenshotCard(english, path.join(SCREENS_DIR, 'helpdesk-card-template-none-en.png'));
  t.true(seen.text.includes('No customer found'));
  t.false(seen.text.toUpperCase().includes('SUBSCRIPTIONS'));
  t.false(seen.text.toUpperCase().includes('ORDERS'));

  const danish = await renderCardTemplate(noCustomer('da'));
  t.true(danish.includes('Ingen kunde fundet'));
  t.false(danish.includes('No customer found'));
  t.false(danish.includes('Abonnementer'));
  const seenDanish = await screenshotCard(danish, path.join(SCREENS_DIR, 'helpdesk-card-none-da.png'));
  t.true(seenDanish.text.includes('Ingen kunde fundet'));
});

test('A customer without subscriptions or orders: both sections say there are none; a missing email or phone leaves no trace', async (t) => {
  const html = await renderCardTemplate({ language: 'da', customer: { name: 'Ole', email: 'ole@example.dk', phone: null }, subscriptions: [], orders: [] });
  t.true(html.includes('Ingen abonnementer.'));
  t.true(html.includes('Ingen ordrer.'));
  t.false(html.includes('Ingen kunde fundet'));
  t.false(html.includes(' · '), 'no separator without a phone');
  const phoneOnly = await renderCardTemplate({ language: 'en', customer: { name: 'Guest', email: null, phone: '+4512345678' }, subscriptions: [], orders: [] });
  t.true(phoneOnly.includes('<div class="muted">+4512345678</div>'));
});

test('Every value is escaped: markup in the answer is shown as text and never runs', async (t) => {
  const hostile = answer(ENGLISH);
  const script = '<script>document.title="pwned"</script>';
  hostile.customer.name = `Jensen ${script} & Søn`;
  hostile.subscriptions[0].products = `Coffee <b>beans</b> & "filters" ${script}`;
  hostile.subscriptions[1].failed_renewal!.headline = `Declined: <img src=x onerror="document.title='pwned'"> & more`;
  hostile.subscriptions[0].actions[0].label = `Pause <i>now</i> & "then"`;
  hostile.subscriptions[0].actions[0].url = `${ACTIONS}/tok"onmouseover="alert(1)`;
  hostile.orders[0].status_label = `<u>Processing</u> & packed`;
  const html = await renderCardTemplate(hostile);

  t.false(/<script|<img|<b>|<i>|<u>/i.test(html), 'no markup of the answer reaches the HTML');
  // Escaped, the values are all there: the HTML read back as text holds each one whole.
  const read = unescaped(html);
  for (const value of [hostile.customer.name, hostile.subscriptions[0].products, hostile.subscriptions[1].failed_renewal!.headline, hostile.orders[0].status_label]) {
    t.true(read.includes(value), value);
  }
  t.true(html.includes('Jensen &lt;script&gt;'));
  t.true(html.includes('&amp; Søn'));
  const pause = linksOf(html).find((link) => link.text === 'Pause <i>now</i> & "then"');
  t.truthy(pause, 'the label is text');
  t.is(pause!.href, `${ACTIONS}/tok"onmouseover="alert(1)`, 'the quote stays inside href');
  t.false(html.includes('" onmouseover') || html.includes('"onmouseover="'), 'no attribute is added');

  const { text } = await screenshotCard(html, path.join(SCREENS_DIR, 'helpdesk-card-escaping.png'));
  t.true(text.includes(`Jensen ${script} & Søn`), 'the script tag is shown as text');
  t.true(text.includes(`Coffee <b>beans</b> & "filters" ${script}`));
  t.true(text.includes(`Declined: <img src=x onerror="document.title='pwned'"> & more`));
  t.true(text.includes('<u>Processing</u> & packed'));
});

test('The answer is read from card.data, and from card itself should Dixa hand it over unwrapped: the same card either way', async (t) => {
  const engine = new Liquid({ strictFilters: true });
  for (const words of [ENGLISH, DANISH]) {
    const wrapped = await renderCardTemplate(answer(words));
    const unwrapped = await engine.parseAndRender(readCardTemplate(), { card: answer(words) });
    t.is(unwrapped, wrapped);
  }
  t.is(await engine.parseAndRender(readCardTemplate(), { card: noCustomer('da') }), await renderCardTemplate(noCustomer('da')));
});

test('The template is self-contained: no script, nothing loaded from elsewhere, only standard Liquid', (t) => {
  const template = readCardTemplate();
  t.false(/<script|<link|<img|<iframe|@import|url\(|\bsrc=/i.test(template));
  // Liqp 0.8.3.3 knows the standard tags; these are the only ones used.
  const tags = new Set([...template.matchAll(/\{%-?\s*(\w+)/g)].map((match) => match[1]));
  t.deepEqual([...tags].filter((tag) => !['comment', 'endcomment', 'assign', 'if', 'else', 'elsif', 'endif', 'for', 'endfor', 'unless', 'endunless', 'case', 'when', 'endcase'].includes(tag)), []);
  const filters = new Set([...template.matchAll(/\|\s*(\w+)/g)].map((match) => match[1]));
  t.deepEqual([...filters].filter((filter) => !['escape', 'size', 'default', 'date', 'upcase', 'downcase', 'append', 'join'].includes(filter)), []);
});

test('cardTemplatePath() finds the shipped file from dist/', (t) => {
  t.is(cardTemplatePath(), path.join(ROOT, 'src', 'helpdesk-card', 'card-template.liquid'));
  t.true(fs.existsSync(cardTemplatePath()));
});

test('payment-hub helpdesk card-template prints the template exactly, with no configuration and no .env', async (t) => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'helpdesk-card-'));
  try {
    const run = await paymentHub(['helpdesk', 'card-template'], {}, folder);
    t.is(run.stderr, '');
    t.is(run.code, 0);
    t.is(run.stdout, fs.readFileSync(path.join(ROOT, 'src', 'helpdesk-card', 'card-template.liquid'), 'utf8'));
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
});
