import type { DataSource } from 'typeorm';
import type { RowDataPacket } from 'mysql2/promise';
import { PaymentToken } from '../../entities';
import { PreparedStatement, slots } from './prepared-statement';
import type { Executor } from './transaction';

/** The card gateway plugin's gateway, whose saved cards (WC_Payment_Token) name the gateway's card by its token. */
export const CARD_PLUGIN_GATEWAY = 'reepay_checkout';

/**
 * WooCommerce's saved cards (`woocommerce_payment_tokens`), read only: the ID WooCommerce knows a gateway's card by,
 * which the card plugin names on an order it charged (`_reepay_token_id`).
 */
export class SavedCardRepository {
  private readonly newestOf: PreparedStatement<'gatewayId' | 'token'>;

  constructor(dataSource: DataSource) {
    this.newestOf = PreparedStatement.from(dataSource.createQueryBuilder().select('t.id', 'id').from(PaymentToken, 't')
      .where('t.gatewayId = :gatewayId AND t.token = :token').orderBy('t.id', 'DESC').limit(1).setParameters(slots('gatewayId', 'token')));
  }

  /** The saved card's ID for the card plugin's `token`, or null when WooCommerce has none saved. */
  async cardPluginTokenId(db: Executor, token: string): Promise<number | null> {
    const { sql, values } = this.newestOf.with({ gatewayId: CARD_PLUGIN_GATEWAY, token });
    const [rows] = await db.query<RowDataPacket[]>(sql, values);
    return rows.length ? Number(rows[0]!.id) : null;
  }
}
