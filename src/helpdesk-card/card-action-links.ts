import crypto from 'node:crypto';

/** What an agent may do from the helpdesk card (CONTRACT.md, "The helpdesk card"). */
export type CardActionName = 'payment_link' | 'pause' | 'force_activate' | 'cancellation_reason';
export const CARD_ACTIONS: readonly CardActionName[] = ['payment_link', 'pause', 'force_activate', 'cancellation_reason'];

/** A link is good for this long after the card that showed it was made. */
export const CARD_ACTION_LIFETIME_MS = 15 * 60_000;

/** What a link is bound to: one agent, one customer, one subscription (and its failed renewal), one action, once, for minutes. */
export interface CardActionClaims {
  action: CardActionName;
  subscriptionId: number;
  /** The failed renewal order, for the payment link; null otherwise. */
  orderId: number | null;
  /** The customer the card matched: the e-mail (lower case) or the phone (E.164) it was asked by. */
  customer: string;
  /** The WordPress user the agent is, and their e-mail as Dixa gave it. */
  agentUserId: number;
  agentEmail: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** Names this link alone: once used, no link with it does anything again. */
  nonce: string;
}

export type VerifiedLink = { ok: true; claims: CardActionClaims } | { ok: false; reason: 'altered' | 'expired' };

const VERSION = 1;
/** Link tokens are short: the URL goes into an iframe's anchors and the browser's history. */
const MAX_TOKEN_LENGTH = 1024;

/**
 * Signs and checks the card's action links. The key is derived from HELPDESK_CARD_TOKEN with a label of its own,
 * so the Bearer token is never the signing key itself, and a new token voids every link already shown.
 */
export class CardActionLinks {
  private readonly key: Buffer;

  constructor(cardToken: string) {
    this.key = crypto.createHmac('sha256', 'shop-sidecar helpdesk card action links').update(cardToken).digest();
  }

  make(claims: Omit<CardActionClaims, 'nonce' | 'expiresAt'>, now: Date): string {
    const full: CardActionClaims = { ...claims, expiresAt: now.getTime() + CARD_ACTION_LIFETIME_MS, nonce: crypto.randomBytes(12).toString('base64url') };
    const body = Buffer.from(JSON.stringify([VERSION, full.action, full.subscriptionId, full.orderId, full.customer, full.agentUserId, full.agentEmail, full.expiresAt, full.nonce])).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The link's claims when its signature holds and it has not expired; what is wrong with it otherwise. */
  verify(token: string, now: Date): VerifiedLink {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'altered' };
    const [body, signature, extra] = token.split('.');
    if (!body || !signature || extra !== undefined) return { ok: false, reason: 'altered' };
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return { ok: false, reason: 'altered' };
    const claims = parse(body);
    if (!claims) return { ok: false, reason: 'altered' };
    if (now.getTime() >= claims.expiresAt) return { ok: false, reason: 'expired' };
    return { ok: true, claims };
  }

  private sign(body: string): string {
    return crypto.createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

function parse(body: string): CardActionClaims | null {
  try {
    const fields = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    if (!Array.isArray(fields) || fields.length !== 9 || fields[0] !== VERSION) return null;
    const [, action, subscriptionId, orderId, customer, agentUserId, agentEmail, expiresAt, nonce] = fields as unknown[];
    if (!CARD_ACTIONS.includes(action as CardActionName)) return null;
    if (!Number.isSafeInteger(subscriptionId) || !(orderId === null || Number.isSafeInteger(orderId)) || !Number.isSafeInteger(agentUserId)) return null;
    if (typeof customer !== 'string' || typeof agentEmail !== 'string' || !Number.isSafeInteger(expiresAt) || typeof nonce !== 'string') return null;
    return {
      action: action as CardActionName, subscriptionId: subscriptionId as number, orderId: orderId as number | null, customer,
      agentUserId: agentUserId as number, agentEmail, expiresAt: expiresAt as number, nonce,
    };
  } catch {
    return null;
  }
}
