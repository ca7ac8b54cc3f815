import path from 'node:path';
import type { Logger } from '../logger';
import type { ShopOrder } from './order';

export type OrderStatusData = Record<string, unknown>;

/**
 * The site's own filters (SPEC 4.1.3), loaded from the module named by SITE_EXTENSIONS. The module
 * exports functions by filter name; `shipping_label` plays the shipping-label plugin's role.
 */
export interface SiteFilters {
  helpdesk_order_status_estimated_delivery?(estimated: string | null, order: ShopOrder): unknown;
  helpdesk_order_status_data?(data: OrderStatusData, order: ShopOrder): unknown;
  shipping_label?(order: ShopOrder): unknown;
}

const FILTER_NAMES = ['helpdesk_order_status_estimated_delivery', 'helpdesk_order_status_data', 'shipping_label'] as const;

/** Applies the filters; a filter that throws or answers out of contract is logged and skipped. */
export class SiteExtensions {
  constructor(private readonly filters: SiteFilters, private readonly log: Logger) {}

  /** Whether the site has this filter: without it, the filter's answer is the service's own. */
  has(name: keyof SiteFilters): boolean {
    return this.filters[name] !== undefined;
  }

  /** Whether the site has any filter at all. */
  any(): boolean {
    return FILTER_NAMES.some((name) => this.has(name));
  }

  static none(log: Logger): SiteExtensions {
    return new SiteExtensions({}, log);
  }

  static load(modulePath: string, log: Logger): SiteExtensions {
    const loaded = require(path.resolve(modulePath));
    const exported = loaded && typeof loaded === 'object' && 'default' in loaded ? loaded.default : loaded;
    const filters: SiteFilters = {};
    for (const name of FILTER_NAMES) {
      if (typeof exported?.[name] === 'function') filters[name] = exported[name];
    }
    log.info('site_extensions_loaded', { module: modulePath, filters: Object.keys(filters) });
    return new SiteExtensions(filters, log);
  }

  async estimatedDelivery(estimated: string | null, order: ShopOrder): Promise<string | null> {
    const filter = this.filters.helpdesk_order_status_estimated_delivery;
    if (!filter) return estimated;
    const result = await this.run('helpdesk_order_status_estimated_delivery', () => filter(estimated, order));
    if (result.ok && (result.value === null || (typeof result.value === 'string' && result.value !== ''))) return result.value;
    if (result.ok) this.log.warn('site_filter_ignored', { filter: 'helpdesk_order_status_estimated_delivery', reason: 'not a non-empty string or null' });
    return estimated;
  }

  async orderStatusData(data: OrderStatusData, order: ShopOrder): Promise<OrderStatusData> {
    const filter = this.filters.helpdesk_order_status_data;
    if (!filter) return data;
    // The filter gets a copy, so one that throws half way cannot leave the answer half changed.
    const result = await this.run('helpdesk_order_status_data', () => filter(structuredClone(data), order));
    if (result.ok && result.value !== null && typeof result.value === 'object' && !Array.isArray(result.value)) {
      return result.value as OrderStatusData;
    }
    if (result.ok) this.log.warn('site_filter_ignored', { filter: 'helpdesk_order_status_data', reason: 'did not return an object' });
    return data;
  }

  /** The latest shipping label's tracking URL, when the site has a label for the order. */
  async trackingUrl(order: ShopOrder): Promise<string | null> {
    const label = this.filters.shipping_label;
    if (!label) return null;
    const result = await this.run('shipping_label', () => label(order));
    if (!result.ok || result.value === null || result.value === undefined) return null;
    const url = (result.value as { tracking_url?: unknown }).tracking_url;
    return typeof url === 'string' && url !== '' ? url : null;
  }

  private async run(filter: string, call: () => unknown): Promise<{ ok: true; value: unknown } | { ok: false }> {
    try {
      return { ok: true, value: await call() };
    } catch (error) {
      this.log.error('site_filter_failed', { filter, error });
      return { ok: false };
    }
  }
}
