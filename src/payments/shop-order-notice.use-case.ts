import { Type, type Static } from '@sinclair/typebox';
import type { Logger } from '../logger';
import { compileShape } from '../shared/json-schema';
import { wellFormed } from '../shared/unicode-text';
import { checkSignature, shopEventsKey, type SignatureRefusal } from '../woocommerce-handover/handover-signature';
import type { OrderSettling, SettleOpenCharges } from './settle-open-charges.use-case';

/** What the companion sends when a renewal order that awaited payment moved to another status. */
export const ShopOrderNoticeSchema = Type.Object({
  order_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The order that changed status.' }),
  from: Type.String({ maxLength: 40, description: 'The status it left, as WooCommerce names it (`failed`). Only logged: the service reads the order\'s status itself.' }),
  to: Type.String({ maxLength: 40, description: 'The status it moved to (`processing`). Only logged, as `from`.' }),
});
export type ShopOrderNotice = Static<typeof ShopOrderNoticeSchema>;

const noticeShape = compileShape(ShopOrderNoticeSchema);

/** The signed request as it arrived: its two headers and its exact bytes. */
export interface SignedNotice {
  timestamp?: string;
  signature?: string;
  body: Buffer;
}

export type NoticeOutcome =
  /** Not signed with the site's salts, or not now: nothing was read. `unverifiable`: the service does not know the salts. */
  | { kind: 'refused'; why: SignatureRefusal | 'unverifiable' }
  /** Signed, but not a notice; `params` names each field at fault (`body` when it is not a JSON object). */
  | { kind: 'malformed'; params: string[] }
  | { kind: 'heard'; notice: ShopOrderNotice; settling: OrderSettling };

/**
 * The companion's notice that a renewal order left the statuses that await payment (paid in the shop through any
 * gateway, marked paid by staff, cancelled): the order's open charge is withdrawn and cancelled at the provider at
 * once, by the settle pass's own rule, instead of at the worker's next pass over the database. The notice only
 * says which order to look at; what the order's status is, the database says. The signature is checked before
 * anything is read (the salts come from the configuration, or from the site's options at most every 2 s), so a
 * caller without the site's salts costs an HMAC.
 */
export class HearShopOrderNotice {
  constructor(private readonly deps: {
    /** `wp_salt('logged_in')`, or the halves the service does not know. */
    loggedInSecret: () => Promise<{ secret: string } | { missing: string[] }>;
    openCharges: Pick<SettleOpenCharges, 'settleOrder'>;
    log: Logger;
    clock: () => Date;
  }) {}

  async execute(signed: SignedNotice): Promise<NoticeOutcome> {
    const secret = await this.deps.loggedInSecret();
    if (!('secret' in secret)) return { kind: 'refused', why: 'unverifiable' };
    const refusal = checkSignature(shopEventsKey(secret.secret), signed, Math.floor(this.deps.clock().getTime() / 1000));
    if (refusal) return { kind: 'refused', why: refusal };
    const notice = parseNotice(signed.body);
    if (!notice.ok) return { kind: 'malformed', params: notice.params };
    const { order_id: orderId, from, to } = notice.value;
    const settling = await this.deps.openCharges.settleOrder(orderId);
    this.deps.log.info('shop_order_notice', { orderId, from, to, outcome: settling.kind, ...('reason' in settling ? { reason: settling.reason } : {}) });
    if (settling.kind === 'withdrawn') {
      void settling.cancelled.then((outcome) => this.deps.log.info('shop_order_notice_cancel', {
        orderId, provider: outcome.charge.provider, externalId: outcome.charge.externalId, outcome: outcome.kind,
      }));
    }
    return { kind: 'heard', notice: notice.value, settling };
  }
}

function parseNotice(body: Buffer): { ok: true; value: ShopOrderNotice } | { ok: false; params: string[] } {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, params: ['body'] };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !wellFormed(value)) return { ok: false, params: ['body'] };
  const checked = noticeShape.check(value);
  return checked.ok ? { ok: true, value: checked.value } : { ok: false, params: [...new Set(checked.faults.map((fault) => fault.field))] };
}
