import type { DataSource } from 'typeorm';
import type { Pool } from 'mysql2/promise';
import { WpOption } from '../../entities';
import { rawPool } from './data-source';
import { PreparedStatement } from './prepared-statement';
import type { Statement } from './transaction';
import { RecentlyRead } from './recently-read';
import { shopTimeZone, type ShopTimeZone } from '../shop/shop-time';
import { serializedStringList } from '../wordpress/serialized-values';

/** The shop-wide settings the service acts on, read from WordPress's options table. */
export interface ShopSettings {
  /** HPOS tables are authoritative, by WooCommerce's own rule for its version (`hposIsAuthoritative`). */
  hpos: boolean;
  /** The other store is kept in sync (`woocommerce_custom_orders_table_data_sync_enabled`). */
  sync: boolean;
  /** Two-letter base country from `woocommerce_default_country` (`DK` or `US:CA`). */
  baseCountry: string;
  timeZone: ShopTimeZone;
  /** The site's language as WordPress keeps it (`WPLANG`: `da_DK`; empty is `en_US`): the language of the service's own notes. */
  language: string;
  priceDecimals: number;
  /** Which order number the shop shows, from the active sequential numbering plugin. */
  orderNumbers: 'id' | 'sequential';
  siteUrl: string;
  /**
   * The companion plugin runs in this WordPress (it says so in the `shop_sidecar_companion` option), so
   * order and subscription changes are handed to WooCommerce instead of written here.
   */
  companion: boolean;
  /**
   * The version the companion states (1: Action Scheduler only; 2: also the hand-over route; see COMPANION_VERSIONS), when it is
   * present as `companion` says; null otherwise.
   */
  companionVersion: number | null;
  /** How WooCommerce shows prices (its Currency options): the symbol's place and the separators. */
  priceFormat?: PriceFormat;
}

export interface PriceFormat {
  position: 'left' | 'right' | 'left_space' | 'right_space';
  thousandSeparator: string;
  decimalSeparator: string;
}

/** Written by the companion plugin on load: `{"version":3,"seen":<unix time>}`, refreshed at least hourly. */
export const COMPANION_OPTION = 'shop_sidecar_companion';
/** Companion versions the service works with: 1 (changes applied by Action Scheduler), 2 (also the hand-over route), 3 (also the dunning e-mail and the cancel after dunning), 4 (also a staff member's order note), 5 (also the e-mail before a renewal, and the notice of a shop payment). */
const COMPANION_VERSIONS = [1, 2, 3, 4, 5];
/** A companion not heard from for this long is taken as removed (WordPress loads it on every request and cron run). */
const COMPANION_SILENCE_SECONDS = 3 * 86400;

const OPTION_NAMES = [
  'woocommerce_currency_pos',
  'woocommerce_price_thousand_sep',
  'woocommerce_price_decimal_sep',
  'woocommerce_custom_orders_table_enabled',
  'woocommerce_custom_orders_table_data_sync_enabled',
  'woocommerce_default_country',
  'timezone_string',
  'gmt_offset',
  'WPLANG',
  'active_plugins',
  'woocommerce_price_num_decimals',
  'siteurl',
  'woocommerce_version',
  'woocommerce_feature_custom_order_tables_enabled',
  COMPANION_OPTION,
];

/** Plugins that replace the order ID with their own `_order_number` / `_order_number_formatted`. */
const SEQUENTIAL_NUMBER_PLUGINS = [
  'woocommerce-sequential-order-numbers/woocommerce-sequential-order-numbers.php',
  'woocommerce-sequential-order-numbers-pro/woocommerce-sequential-order-numbers-pro.php',
  'wt-woocommerce-sequential-order-numbers/wt-advanced-order-number.php',
];

/**
 * WooCommerce's own rule: before 8.1, HPOS was a feature of its own (`woocommerce_feature_custom_order_tables_enabled`)
 * and the orders tables were read only while that feature was on as well as `woocommerce_custom_orders_table_enabled`
 * = yes; from 8.1 the feature's switch is that option itself. An unknown version is taken as a current one.
 */
export function hposIsAuthoritative(options: Map<string, string>): boolean {
  if (options.get('woocommerce_custom_orders_table_enabled') !== 'yes') return false;
  const [major, minor] = (options.get('woocommerce_version') ?? '').split('.').map(Number);
  const beforeOneFeature = Number.isFinite(major) && Number.isFinite(minor) && (major < 8 || (major === 8 && minor < 1));
  return !beforeOneFeature || options.get('woocommerce_feature_custom_order_tables_enabled') === 'yes';
}

/** The companion's version when it runs here (a version the service knows, heard from recently), else null. */
function presentCompanionVersion(raw: string | undefined, nowSeconds: number): number | null {
  try {
    const stated = JSON.parse(raw ?? '') as { version?: unknown; seen?: unknown } | null;
    const version = Number(stated?.version);
    return COMPANION_VERSIONS.includes(version) && nowSeconds - Number(stated?.seen) < COMPANION_SILENCE_SECONDS ? version : null;
  } catch {
    return null;
  }
}

export function settingsFromOptions(options: Map<string, string>, now = new Date()): ShopSettings {
  const plugins = serializedStringList(options.get('active_plugins') ?? '');
  const decimals = Number(options.get('woocommerce_price_num_decimals') ?? '2');
  const companionVersion = presentCompanionVersion(options.get(COMPANION_OPTION), now.getTime() / 1000);
  return {
    hpos: hposIsAuthoritative(options),
    sync: options.get('woocommerce_custom_orders_table_data_sync_enabled') === 'yes',
    baseCountry: (options.get('woocommerce_default_country') ?? '').split(':')[0].trim().toUpperCase(),
    timeZone: shopTimeZone(options.get('timezone_string'), options.get('gmt_offset')),
    language: options.get('WPLANG')?.trim() || 'en_US',
    priceDecimals: Number.isInteger(decimals) && decimals >= 0 && decimals <= 8 ? decimals : 2,
    orderNumbers: plugins.some((plugin) => SEQUENTIAL_NUMBER_PLUGINS.includes(plugin)) ? 'sequential' : 'id',
    siteUrl: options.get('siteurl') ?? '',
    companion: companionVersion !== null,
    companionVersion,
    priceFormat: {
      position: (['left', 'right', 'left_space', 'right_space'] as const).find((position) => position === options.get('woocommerce_currency_pos')) ?? 'left',
      thousandSeparator: options.get('woocommerce_price_thousand_sep') ?? ',',
      decimalSeparator: options.get('woocommerce_price_decimal_sep') ?? '.',
    },
  };
}

/**
 * Reads the settings at most once per `maxAgeMs`: every order lookup needs them, and a switch of
 * storage mode in WP admin is picked up within that time.
 */
export class ShopSettingsRepository {
  private readonly pool: Pool;
  private readonly options: Statement;
  private readonly settings: RecentlyRead<ShopSettings>;

  constructor(dataSource: DataSource, maxAgeMs = 1000) {
    this.pool = rawPool(dataSource);
    this.options = PreparedStatement.from(dataSource.createQueryBuilder()
      .select('o.name', 'name').addSelect('o.value', 'value').from(WpOption, 'o')
      .where('o.name IN (:names)').setParameters({ names: OPTION_NAMES })).with({});
    this.settings = new RecentlyRead(() => this.read(), maxAgeMs);
  }

  current(): Promise<ShopSettings> {
    return this.settings.get();
  }

  private async read(): Promise<ShopSettings> {
    const [rows] = await this.pool.query(this.options.sql, this.options.values);
    const options = new Map<string, string>();
    for (const row of rows as { name: string; value: string }[]) options.set(row.name, row.value);
    return settingsFromOptions(options);
  }
}
