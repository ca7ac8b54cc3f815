import mysql from 'mysql2/promise';
import type { DataSource } from 'typeorm';
import { PreparedStatement, slots } from '../data-access/prepared-statement';
import { HposOrder, Post, PostMeta } from '../../entities';
import { checkPrefix, getOption, type Db } from './woocommerce-schema';
import { ShopSeeder, shopTables, type Address, type OrderSpec, type ShippingLineSpec } from './shop-seeder';

/**
 * A small, deterministic Danish subscription shop: a few hundred orders over every carrier, status, several
 * countries and phone spellings, refunds, subscriptions and staff users. Returns sample order-status requests.
 */

export interface DemoSample {
  order_number: string;
  email: string;
  phone: string;
}

export interface DemoSamples {
  /** An existing completed order shipped with DAO, with its billing email and phone as stored, and its ID. */
  match: DemoSample & { order_id: number };
  /** An order whose billing phone is stored as "20123456"-style; `phone` is the same number written another way. */
  phoneMatch: DemoSample;
  /** An existing order number with an email and a phone that are not the order's. */
  mismatch: DemoSample;
  /** An order number that does not exist, with a real customer's email and phone. */
  notFound: DemoSample;
  subscriptions: { active: number; onHold: number };
  users: { admin: { login: string; password: string }; shopManager: { login: string; password: string } };
}

export interface DemoOptions {
  orders: number;
  /** PRNG seed; the same seed gives the same shop. */
  seed?: number;
  /** Dates are placed in the 120 days before this instant (default: now). */
  now?: Date;
}

/** mulberry32: a small seeded PRNG (no Math.random, so the shop is reproducible). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST_NAMES = ['Anne', 'Mette', 'Hanne', 'Susanne', 'Kirsten', 'Camilla', 'Louise', 'Sofie', 'Ida', 'Freja', 'Peter', 'Jens', 'Lars', 'Michael', 'Henrik', 'Søren', 'Thomas', 'Rasmus', 'Mads', 'Frederik', 'Niels', 'Jørgen', 'Birthe', 'Åse'];
const LAST_NAMES = ['Jensen', 'Nielsen', 'Hansen', 'Pedersen', 'Andersen', 'Christensen', 'Larsen', 'Sørensen', 'Rasmussen', 'Jørgensen', 'Petersen', 'Madsen', 'Kristensen', 'Olsen', 'Thomsen', 'Møller', 'Poulsen', 'Østergaard', 'Kjær', 'Lund'];
const DK_STREETS = ['Vestergade', 'Nørregade', 'Østergade', 'Søndergade', 'Algade', 'Strandvejen', 'Kongensgade', 'Skovvej', 'Bøgevej', 'Havnegade', 'Jernbanegade', 'Ågade'];
const DK_CITIES: [string, string][] = [['1050', 'København K'], ['2100', 'København Ø'], ['2200', 'København N'], ['8000', 'Aarhus C'], ['5000', 'Odense C'], ['9000', 'Aalborg'], ['6700', 'Esbjerg'], ['7100', 'Vejle'], ['4000', 'Roskilde'], ['3000', 'Helsingør'], ['8600', 'Silkeborg'], ['6000', 'Kolding']];
const FOREIGN: Record<'SE' | 'NO' | 'DE', { first: string[]; last: string[]; streets: string[]; cities: [string, string][]; phones: ((r: () => number) => string)[] }> = {
  SE: {
    first: ['Erik', 'Karin', 'Lena', 'Johan', 'Björn'], last: ['Andersson', 'Johansson', 'Karlsson', 'Nilsson'],
    streets: ['Storgatan', 'Drottninggatan', 'Kungsgatan'], cities: [['211 22', 'Malmö'], ['111 52', 'Stockholm'], ['411 04', 'Göteborg']],
    phones: [(r) => `+46 70 ${digits(r, 3)} ${digits(r, 2)} ${digits(r, 2)}`, (r) => `070-${digits(r, 3)} ${digits(r, 2)} ${digits(r, 2)}`],
  },
  NO: {
    first: ['Ola', 'Kari', 'Ingrid', 'Håkon'], last: ['Hansen', 'Johansen', 'Olsen', 'Berg'],
    streets: ['Karl Johans gate', 'Storgata', 'Bygdøy allé'], cities: [['0154', 'Oslo'], ['5003', 'Bergen'], ['7011', 'Trondheim']],
    phones: [(r) => `+47 9${digits(r, 2)} ${digits(r, 2)} ${digits(r, 3)}`, (r) => `9${digits(r, 7)}`],
  },
  DE: {
    first: ['Jürgen', 'Petra', 'Klaus', 'Sabine'], last: ['Müller', 'Schmidt', 'Schneider', 'Fischer'],
    streets: ['Hauptstraße', 'Bahnhofstraße', 'Schillerstraße'], cities: [['24937', 'Flensburg'], ['20095', 'Hamburg'], ['24103', 'Kiel']],
    phones: [(r) => `+49 151 ${digits(r, 8)}`, (r) => `0171 ${digits(r, 7)}`],
  },
};

const PRODUCTS: { id: number; name: string; price: number }[] = [
  { id: 101, name: 'Kaffeabonnement – Husets blanding 500 g', price: 119 },
  { id: 102, name: 'Kaffeabonnement – Økologisk espresso 1 kg', price: 229 },
  { id: 103, name: 'Teabonnement – Grøn te 250 g', price: 89 },
  { id: 104, name: 'Chokoladeboks', price: 149 },
  { id: 105, name: 'Kaffefilter nr. 4', price: 25 },
  { id: 106, name: 'Termokop', price: 199 },
];

const CARRIERS: { methodId: string; title: string; price: number; instanceId: string }[] = [
  { methodId: 'dao', title: 'DAO Pakkeshop', price: 39, instanceId: '3' },
  { methodId: 'dhl', title: 'DHL Express', price: 79, instanceId: '5' },
  { methodId: 'bladkompagniet', title: 'Bladkompagniet – morgenlevering', price: 29, instanceId: '7' },
  { methodId: 'flat_rate', title: 'Fragt', price: 49, instanceId: '1' },
  { methodId: 'local_pickup', title: 'Afhentning i butikken', price: 0, instanceId: '2' },
];

const STATUSES = ['completed', 'completed', 'completed', 'completed', 'processing', 'processing', 'on-hold', 'pending', 'cancelled', 'failed'];

const PAYMENT_METHODS: [string, string][] = [['reepay_checkout', 'Betalingskort'], ['vipps_mobilepay_recurring', 'MobilePay'], ['bacs', 'Bankoverførsel']];

function digits(random: () => number, count: number): string {
  return Array.from({ length: count }, () => Math.floor(random() * 10)).join('');
}

/** A Danish mobile number ("2x xx xx xx") written in one of the ways customers type it. */
function danishPhone(random: () => number, style: number): { stored: string; national: string } {
  const national = `${2 + Math.floor(random() * 2)}${digits(random, 7)}`;
  const pairs = national.match(/../g)!;
  const styles = [`+45 ${pairs.join(' ')}`, national, pairs.join('-'), `+45${national}`, `0045 ${national}`, pairs.join(' ')];
  return { stored: styles[style % styles.length], national };
}

/** VAT-inclusive price -> [amount without VAT, VAT] at 25 %, as WooCommerce splits it with prices entered incl. tax. */
function splitVat(gross: number): [string, string] {
  const net = Math.round((gross / 1.25) * 100) / 100;
  return [net.toFixed(2), (Math.round((gross - net) * 100) / 100).toFixed(2)];
}

function slugEmail(first: string, last: string, n: number): string {
  const ascii = (s: string) => s.toLowerCase().replace(/æ/g, 'ae').replace(/ø/g, 'oe').replace(/å/g, 'aa').replace(/ä/g, 'ae').replace(/ö/g, 'oe').replace(/ü/g, 'ue').replace(/ß/g, 'ss').replace(/[^a-z0-9]/g, '');
  return `${ascii(first)}.${ascii(last)}${n}@example.dk`;
}

interface Customer {
  billing: Address & { email: string; phone: string };
  nationalPhone?: string;
}

function makeCustomer(random: () => number, n: number, country: string): Customer {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  if (country === 'SE' || country === 'NO' || country === 'DE') {
    const local = FOREIGN[country];
    const first = pick(local.first);
    const last = pick(local.last);
    const [postcode, city] = pick(local.cities);
    return {
      billing: {
        first_name: first, last_name: last, company: '', address_1: `${pick(local.streets)} ${1 + Math.floor(random() * 80)}`, address_2: '',
        city, state: '', postcode, country, email: slugEmail(first, last, n), phone: pick(local.phones)(random),
      },
    };
  }
  const first = pick(FIRST_NAMES);
  const last = pick(LAST_NAMES);
  const [postcode, city] = pick(DK_CITIES);
  const phone = danishPhone(random, Math.floor(random() * 6));
  return {
    billing: {
      first_name: first, last_name: last, company: random() < 0.08 ? `${last} ApS` : '',
      address_1: `${pick(DK_STREETS)} ${1 + Math.floor(random() * 120)}`, address_2: random() < 0.15 ? `${1 + Math.floor(random() * 5)}. tv.` : '',
      city, state: '', postcode, country, email: slugEmail(first, last, n), phone: phone.stored,
    },
    nationalPhone: phone.national,
  };
}

/** The sequential numbering plugin the shop has active, from `active_plugins`. */
async function sequentialPlugin(db: Db, p: string): Promise<'none' | 'free' | 'pro'> {
  const plugins = (await getOption(db, p, 'active_plugins')) ?? '';
  if (plugins.includes('woocommerce-sequential-order-numbers-pro/')) return 'pro';
  if (plugins.includes('woocommerce-sequential-order-numbers/')) return 'free';
  return 'none';
}

/**
 * Seeds the demo shop into tables made by `createWooCommerceTables()` and options from `configureShop()`
 * (the sequential numbering plugin configured there decides whether orders get `_order_number`).
 */
export async function seedDemoShop(db: Db, prefix: string, mode: { hpos: boolean; sync: boolean }, opts: DemoOptions): Promise<DemoSamples> {
  const p = checkPrefix(prefix);
  const random = seededRandom(opts.seed ?? 20261121);
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
  const now = opts.now ?? new Date();
  const timezone = await siteTimeZone(db, p);
  const seeder = new ShopSeeder(db, p, mode, timezone);
  const numbering = await sequentialPlugin(db, p);
  const tables = await shopTables(db, p);
  const totalOf = orderTotal(tables, mode);

  const adminPassword = 'demo-admin-password';
  const managerPassword = 'demo-manager-password';
  await seeder.createUser({ login: 'admin', email: 'admin@example.dk', pass: adminPassword, roles: ['administrator'], displayName: 'Administrator' });
  await seeder.createUser({ login: 'butik', email: 'butik@example.dk', pass: managerPassword, roles: ['shop_manager'], displayName: 'Butikschef' });

  let sequence = 1000;
  const numberOf = new Map<number, string>();
  const numbered = (spec: OrderSpec): OrderSpec => {
    if (numbering === 'none') return spec;
    sequence += 1;
    return { ...spec, orderNumber: String(sequence), orderNumberFormatted: numbering === 'pro' ? `DK-${String(sequence).padStart(6, '0')}` : undefined };
  };
  const displayed = (id: number, spec: OrderSpec) => spec.orderNumberFormatted ?? spec.orderNumber ?? String(id);

  const customers: Customer[] = [];
  const customerIds: number[] = [];
  for (let i = 0; i < 12; i++) {
    const customer = makeCustomer(random, i, 'DK');
    customers.push(customer);
    customerIds.push(await seeder.createUser({
      login: customer.billing.email.split('@')[0], email: customer.billing.email, roles: ['customer'],
      displayName: `${customer.billing.first_name} ${customer.billing.last_name}`, billing: customer.billing,
      registeredGmt: new Date(now.getTime() - 200 * 86_400_000),
    }));
  }

  const orderSpec = (n: number, overrides: Partial<OrderSpec> & { country?: string } = {}): { spec: OrderSpec; customer: Customer } => {
    const { country: fixedCountry, ...specOverrides } = overrides;
    const roll = random();
    const country = fixedCountry ?? (roll < 0.08 ? 'SE' : roll < 0.13 ? 'NO' : roll < 0.18 ? 'DE' : 'DK');
    const registered = country === 'DK' && random() < 0.2 ? Math.floor(random() * customers.length) : -1;
    const customer = registered >= 0 ? customers[registered] : makeCustomer(random, 100 + n, country);
    const carrier = CARRIERS[n % CARRIERS.length];
    const lines = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
      const product = pick(PRODUCTS);
      const qty = 1 + Math.floor(random() * 2);
      const [total, tax] = splitVat(product.price * qty);
      return { name: product.name, qty, total, tax, productId: product.id };
    });
    const [shipTotal, shipTax] = splitVat(carrier.price);
    const shippingLine: ShippingLineSpec = { methodId: carrier.methodId, title: carrier.title, total: shipTotal, tax: shipTax, instanceId: carrier.instanceId };
    const [paymentMethod, paymentMethodTitle] = pick(PAYMENT_METHODS);
    const created = new Date(now.getTime() - Math.floor(random() * 120 * 86_400_000));
    const shipToOther = random() < 0.1;
    return {
      customer,
      spec: {
        status: pick(STATUSES), createdGmt: created, currency: 'DKK', paymentMethod, paymentMethodTitle,
        customerId: registered >= 0 ? customerIds[registered] : 0,
        billing: customer.billing,
        shipping: shipToOther
          ? { ...customer.billing, first_name: pick(FIRST_NAMES), address_1: `${pick(DK_STREETS)} ${1 + Math.floor(random() * 60)}`, phone: '' }
          : { ...customer.billing, phone: customer.billing.phone },
        lineItems: lines, shipping_lines: [shippingLine],
        ...specOverrides,
      },
    };
  };

  const create = async (spec: OrderSpec) => {
    const withNumber = numbered(spec);
    const id = await seeder.createOrder(withNumber);
    numberOf.set(id, displayed(id, withNumber));
    return id;
  };

  // The orders the samples point at, then the rest.
  const matchCustomer = makeCustomer(random, 1, 'DK');
  const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
  const matchId = await create(orderSpec(1, {
    status: 'completed', billing: matchCustomer.billing, shipping: { ...matchCustomer.billing },
    createdGmt: daysAgo(3), paidGmt: daysAgo(3), completedGmt: daysAgo(2),
    shipping_lines: [{ methodId: 'dao', title: 'DAO Pakkeshop', total: '31.20', tax: '7.80', instanceId: '3' }],
  }).spec);
  const phoneCustomer = makeCustomer(random, 2, 'DK');
  const phoneNational = phoneCustomer.nationalPhone!;
  phoneCustomer.billing.phone = phoneNational;
  const phoneMatchId = await create(orderSpec(2, {
    status: 'processing', billing: phoneCustomer.billing, shipping: { ...phoneCustomer.billing }, createdGmt: daysAgo(1),
    shipping_lines: [{ methodId: 'dhl', title: 'DHL Express', total: '63.20', tax: '15.80', instanceId: '5' }],
  }).spec);

  // Every status and carrier, foreign and blank countries, refunds, orders with neither date, legacy-style empty dates.
  let created = 2;
  const total = Math.max(opts.orders, 40);
  const fixed: (Partial<OrderSpec> & { country?: string })[] = [
    ...['pending', 'processing', 'on-hold', 'completed', 'cancelled', 'refunded', 'failed'].map((status) => ({ status })),
    ...CARRIERS.map((carrier) => ({ status: 'completed', shipping_lines: [{ methodId: carrier.methodId, title: carrier.title, total: splitVat(carrier.price)[0], tax: splitVat(carrier.price)[1], instanceId: carrier.instanceId }] })),
    { status: 'completed', country: 'SE' }, { status: 'completed', country: 'NO' }, { status: 'processing', country: 'DE' },
    { status: 'processing', country: 'DE', shipping_lines: [{ methodId: 'dhl', title: 'DHL Express', total: '63.20', tax: '15.80', instanceId: '5' }] },
    { status: 'on-hold', paidGmt: null, completedGmt: null, paymentMethod: 'bacs', paymentMethodTitle: 'Bankoverførsel' },
    { status: 'pending', paidGmt: null, completedGmt: null, meta: { _paid_date: '', _completed_date: '', _date_paid: '', _date_completed: '' } },
  ];
  for (const overrides of fixed) {
    created += 1;
    await create(orderSpec(created, overrides).spec);
  }
  // A blank billing country (the phone carries its own country code, so it can still be verified).
  created += 1;
  const blank = orderSpec(created, { status: 'completed' });
  await create({ ...blank.spec, billing: { ...blank.spec.billing, country: '', phone: '+45 40 11 22 33' }, shipping: { ...blank.spec.shipping, country: '' } });

  const refundCandidates: { id: number; total: string; full: boolean; created: Date }[] = [];
  while (created < total) {
    created += 1;
    const { spec } = orderSpec(created);
    const id = await create(spec);
    if (spec.status === 'completed' && random() < 0.12) refundCandidates.push({ id, total: await totalOf(db, id), full: random() < 0.4, created: spec.createdGmt! });
  }
  for (const candidate of refundCandidates) {
    const when = new Date(candidate.created.getTime() + 5 * 86_400_000);
    if (candidate.full) {
      await seeder.createRefund(candidate.id, candidate.total, { reason: 'Fortrudt køb', fullyRefunded: true, createdGmt: when, refundedPayment: true });
    } else {
      await seeder.createRefund(candidate.id, '25.00', { reason: 'Kompensation for forsinket levering', createdGmt: when, refundedPayment: true });
    }
  }
  // Orders seeded straight into `refunded` get the refund that would have put them there.
  await refundRefundedOrders(db, tables, mode, seeder);

  // Subscriptions: an active and an on-hold one for the staff routes, a few more in other states.
  const subscription = async (customerIndex: number, status: string, nextPaymentDays: number | null) => {
    const customer = customers[customerIndex];
    const start = daysAgo(30 + customerIndex * 7);
    const [lineTotal, lineTax] = splitVat(229);
    const [shipTotal, shipTax] = splitVat(29);
    const parentSpec: OrderSpec = {
      status: 'completed', createdGmt: start, customerId: customerIds[customerIndex], billing: customer.billing, shipping: { ...customer.billing },
      paymentMethod: 'reepay_checkout', paymentMethodTitle: 'Betalingskort',
      lineItems: [{ name: 'Kaffeabonnement – Økologisk espresso 1 kg', qty: 1, total: lineTotal, tax: lineTax, productId: 102 }],
      shipping_lines: [{ methodId: 'bladkompagniet', title: 'Bladkompagniet – morgenlevering', total: shipTotal, tax: shipTax, instanceId: '7' }],
    };
    const parentId = await create(parentSpec);
    return seeder.createSubscription({
      ...parentSpec, status, parentId, billingPeriod: 'month', billingInterval: 1, startGmt: start,
      nextPaymentGmt: nextPaymentDays === null ? null : new Date(now.getTime() + nextPaymentDays * 86_400_000),
      endGmt: status === 'cancelled' ? daysAgo(2) : null, cancelledGmt: status === 'cancelled' ? daysAgo(2) : null,
    });
  };
  const active = await subscription(0, 'active', 12);
  const onHold = await subscription(1, 'on-hold', null);
  await subscription(2, 'active', 3);
  await subscription(3, 'pending-cancel', null);
  await subscription(4, 'cancelled', null);

  const national = phoneNational.match(/../g)!;
  return {
    match: { order_number: numberOf.get(matchId)!, email: matchCustomer.billing.email, phone: matchCustomer.billing.phone, order_id: matchId },
    phoneMatch: { order_number: numberOf.get(phoneMatchId)!, email: phoneCustomer.billing.email, phone: `+45 ${national.join(' ')}` },
    mismatch: { order_number: numberOf.get(matchId)!, email: 'someone.else@example.dk', phone: '+45 99 88 77 66' },
    notFound: { order_number: numbering === 'pro' ? 'DK-999999' : '987654', email: matchCustomer.billing.email, phone: matchCustomer.billing.phone },
    subscriptions: { active, onHold },
    users: { admin: { login: 'admin', password: adminPassword }, shopManager: { login: 'butik', password: managerPassword } },
  };
}

async function siteTimeZone(db: Db, p: string): Promise<string> {
  const zone = (await getOption(db, p, 'timezone_string')) ?? '';
  try {
    if (zone) new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** An order's total, read from the authoritative store. */
function orderTotal(tables: DataSource, mode: { hpos: boolean }): (db: Db, id: number) => Promise<string> {
  const query = tables.createQueryBuilder();
  const total = PreparedStatement.from<'id'>(mode.hpos
    ? query.select('o.totalAmount', 'total').from(HposOrder, 'o').where('o.id = :id').setParameters(slots('id'))
    : query.select('m.value', 'total').from(PostMeta, 'm').where('m.postId = :id AND m.key = :key').setParameters({ ...slots('id'), key: '_order_total' }));
  return async (db, id) => {
    const statement = total.with({ id });
    const [rows] = await db.query<mysql.RowDataPacket[]>(statement.sql, statement.values);
    return Number(rows[0].total).toFixed(2);
  };
}

/** Orders seeded directly in status `refunded` get the full refund that put them there. */
async function refundRefundedOrders(db: Db, tables: DataSource, mode: { hpos: boolean }, seeder: ShopSeeder): Promise<void> {
  const query = () => tables.createQueryBuilder();
  const isoDate = (column: string) => `DATE_FORMAT(${column}, '%Y-%m-%dT%H:%i:%sZ')`;
  const unrefunded = mode.hpos
    ? query().select('o.id', 'id').addSelect('o.totalAmount', 'total').addSelect(isoDate('o.dateCreatedGmt'), 'created').from(HposOrder, 'o')
      .where("o.type = 'shop_order' AND o.status = 'wc-refunded'")
      .andWhere(`NOT EXISTS ${query().subQuery().select('1').from(HposOrder, 'r').where("r.type = 'shop_order_refund' AND r.parentOrderId = o.id").getQuery()}`)
    : query().select('o.id', 'id').addSelect('m.value', 'total').addSelect(isoDate('o.dateGmt'), 'created').from(Post, 'o')
      .innerJoin(PostMeta, 'm', "m.postId = o.id AND m.key = '_order_total'")
      .where("o.type = 'shop_order' AND o.status = 'wc-refunded'")
      .andWhere(`NOT EXISTS ${query().subQuery().select('1').from(Post, 'r').where("r.type = 'shop_order_refund' AND r.parentId = o.id").getQuery()}`);
  const [rows] = await db.query<mysql.RowDataPacket[]>(...unrefunded.getQueryAndParameters());
  for (const row of rows) {
    const created = new Date(String(row.created));
    await seeder.createRefund(Number(row.id), Number(row.total).toFixed(2), {
      reason: 'Returneret', fullyRefunded: true, createdGmt: new Date(created.getTime() + 3 * 86_400_000), refundedPayment: true,
    });
  }
}
