import type { OrderRepository } from '../data-access/order-repository';
import type { OrderWriteRepository } from '../data-access/order-write-repository';
import type { RetryRepository } from '../data-access/retry-repository';
import type { ShopSettings } from '../data-access/shop-settings-repository';
import type { RowDataPacket } from 'mysql2/promise';
import type { Statement } from '../data-access/transaction';

/** Where the card gateway's WooCommerce plugin keeps an order's invoice handle. */
const CARD_GATEWAY_ORDER_META = '_reepay_order';

/**
 * How payments find their orders and subscriptions, as the providers' own WooCommerce plugins
 * record them, so a shop migrated from those plugins keeps working.
 */
export class OrderLinks {
  constructor(private readonly orders: OrderRepository, private readonly writes: OrderWriteRepository, private readonly retries: RetryRepository) {}

  /**
   * Card gateway: the order whose `_reepay_order` holds the handle, else `order-<n>[-suffix]` names order
   * number n. `searched`: what `cardGatewayHandleSearch` found, when it was sent with other statements.
   */
  async orderForCardGatewayHandle(handle: string, settings: ShopSettings, searched?: number[]): Promise<number | null> {
    if (searched) return searched[0] ?? null;
    const { sql, values } = this.cardGatewayHandleSearch(handle, settings);
    const [rows] = await this.writes.pool.query<RowDataPacket[]>(sql, values);
    return rows.length ? Number(rows[0].id) : null;
  }

  /**
   * The search of `orderForCardGatewayHandle` as one statement (a row with the order's `id`, or none), so it
   * can travel with others on a transaction's own connection; with `onlyIf`, a condition that does not
   * depend on the rows, it searches only when that holds.
   */
  cardGatewayHandleSearch(handle: string, settings: ShopSettings, onlyIf?: Statement): Statement {
    const byMeta = this.writes.findIdsByMetaStatement(CARD_GATEWAY_ORDER_META, handle, 'shop_order', settings);
    const number = /^order-([^-]+)(?:-.+)?$/.exec(handle)?.[1];
    const byNumber = number === undefined ? null : this.orders.orderNumberSearch(number, settings);
    const sql = `SELECT id FROM ((SELECT id, 0 AS preference FROM (${byMeta.sql} LIMIT 1) meta)`
      + `${byNumber ? ` UNION ALL (SELECT id, 1 FROM (${byNumber.sql}) numbered)` : ''}) found`
      + `${onlyIf ? ` WHERE ${onlyIf.sql}` : ''} ORDER BY preference LIMIT 1`;
    return { sql, values: [...byMeta.values, ...(byNumber?.values ?? []), ...(onlyIf?.values ?? [])] };
  }

  /**
   * Mobile wallet: the order whose `_charge_id` is the charge, else the order of the dunning attempt whose
   * key the charge ID holds (`<shop tag>-retry-<order>-<attempt>`), for a charge whose creation answer was lost.
   */
  async orderForWalletCharge(chargeId: string, settings: ShopSettings): Promise<number | null> {
    const [id] = await this.writes.findIdsByMeta('_charge_id', chargeId, 'shop_order', settings);
    if (id) return id;
    // The attempt's key, after the shop's tag (walletRetryOrderId) on charges made since the tag was added.
    const attempt = /^(?:[0-9a-f]{8}-)?(retry-(\d+)-\d+)(?:-r\d+)?$/.exec(chargeId);
    return attempt && (await this.retries.hasKey(Number(attempt[2]), attempt[1])) ? Number(attempt[2]) : null;
  }

  /** Mobile wallet: the subscription whose `_agreement_id` is the agreement. */
  async subscriptionForAgreement(agreementId: string, settings: ShopSettings): Promise<number | null> {
    const [id] = await this.writes.findIdsByMeta('_agreement_id', agreementId, 'shop_subscription', settings);
    return id ?? null;
  }
}
