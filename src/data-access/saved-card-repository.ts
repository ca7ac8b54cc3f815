import type { DataSource } from 'typeorm';
import type { Pool, RowDataPacket } from 'mysql2/promise';
import { rawPool } from './data-source';
import { PaymentToken, PaymentTokenMeta } from '../../entities';
import { PreparedStatement, slots } from './prepared-statement';
import type { Executor } from './transaction';

/** The card gateway plugin's gateway, whose saved cards (WC_Payment_Token) name the gateway's card by its token. */
export const CARD_PLUGIN_GATEWAY = 'reepay_checkout';

/**
 * WooCommerce's saved cards (`woocommerce_payment_tokens`), read only: the ID WooCommerce knows a gateway's card by,
 * which the card plugin names on an order it charged (`_reepay_token_id`).
 */
/** A saved card as WooCommerce shows it (WC_Payment_Token_CC's meta); a field WooCommerce has not is ''. */
export interface SavedCardDetails {
  cardType: string;
  last4: string;
  expiryMonth: string;
  expiryYear: string;
}

export class SavedCardRepository {
  private readonly newestOf: PreparedStatement<'gatewayId' | 'token'>;
  private readonly detailsOf: PreparedStatement<'gatewayId' | 'tokens'>;

  private readonly pool: Pool;

  constructor(dataSource: DataSource) {
    this.pool = rawPool(dataSource);
    this.detailsOf = PreparedStatement.from(dataSource.createQueryBuilder().select('t.token', 'token').addSelect('t.id', 'id')
      .addSelect('m.key', 'key').addSelect('m.value', 'value').from(PaymentToken, 't')
      .leftJoin(PaymentTokenMeta, 'm', "m.paymentTokenId = t.id AND m.key IN ('card_type', 'last4', 'expiry_month', 'expiry_year')")
      .where('t.gatewayId = :gatewayId AND t.token IN (:tokens)').orderBy('t.id').setParameters(slots('gatewayId', 'tokens')));
    this.newestOf = PreparedStatement.from(dataSource.createQueryBuilder().select('t.id', 'id').from(PaymentToken, 't')
      .where('t.gatewayId = :gatewayId AND t.token = :token').orderBy('t.id', 'DESC').limit(1).setParameters(slots('gatewayId', 'token')));
  }

  /** The card plugin's saved cards of these gateway tokens (`ca_…`), by token (the newest saved one of each). */
  async cardDetails(tokens: string[]): Promise<Map<string, SavedCardDetails>> {
    const found = new Map<string, SavedCardDetails>();
    if (!tokens.length) return found;
    const { sql, values } = this.detailsOf.with({ gatewayId: CARD_PLUGIN_GATEWAY, tokens });
    const [rows] = await this.pool.query<RowDataPacket[]>(sql, values);
    const newest = new Map<string, number>();
    for (const row of rows) {
      const token = String(row.token);
      const id = Number(row.id);
      if ((newest.get(token) ?? -1) < id) {
        newest.set(token, id);
        found.set(token, { cardType: '', last4: '', expiryMonth: '', expiryYear: '' });
      }
      if (newest.get(token) !== id) continue;
      const card = found.get(token)!;
      if (row.key === 'card_type') card.cardType = String(row.value ?? '');
      if (row.key === 'last4') card.last4 = String(row.value ?? '');
      if (row.key === 'expiry_month') card.expiryMonth = String(row.value ?? '');
      if (row.key === 'expiry_year') card.expiryYear = String(row.value ?? '');
    }
    return found;
  }

  /** The saved card's ID for the card plugin's `token`, or null when WooCommerce has none saved. */
  async cardPluginTokenId(db: Executor, token: string): Promise<number | null> {
    const { sql, values } = this.newestOf.with({ gatewayId: CARD_PLUGIN_GATEWAY, token });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? Number(rows[0]!.id) : null;
  }
}
