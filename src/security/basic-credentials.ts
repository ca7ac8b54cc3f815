import { constantTimeEqual } from './constant-time';

export interface BasicCredentials {
  user: string;
  password: string;
}

/** The user and password of an `Authorization: Basic` header, or null. */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** What an `Authorization` header carries, and whether it is the configured key and secret. */
export interface HeaderCheck {
  authorized: boolean;
  supplied: BasicCredentials | null;
}

/** One configured key and secret; unset means nothing is accepted. */
export class StaticBasicCredentials {
  // Header values already found right skip the decoding and the digests next time. A hit only ever answers
  // for the exact right credentials, so it tells a guesser nothing about a wrong one.
  private readonly accepted = new Map<string, HeaderCheck>();

  constructor(private readonly key?: string, private readonly secret?: string) {}

  acceptsHeader(header: string | undefined): boolean {
    return this.checkHeader(header).authorized;
  }

  /** The header's credentials and whether they are right, decoded once for the route's two questions. */
  checkHeader(header: string | undefined): HeaderCheck {
    const known = header === undefined ? undefined : this.accepted.get(header);
    if (known) return known;
    const supplied = parseBasicAuthorization(header);
    const check = { authorized: this.accepts(supplied), supplied };
    if (check.authorized && header !== undefined && this.accepted.size < 16) this.accepted.set(header, check);
    return check;
  }

  /** Whether `user` is the configured key's name (whatever the secret sent with it). */
  namesKey(user: string): boolean {
    return Boolean(this.key) && constantTimeEqual(user, this.key ?? '');
  }

  accepts(supplied: BasicCredentials | null): boolean {
    const userOk = constantTimeEqual(supplied?.user ?? '', this.key ?? '');
    const passwordOk = constantTimeEqual(supplied?.password ?? '', this.secret ?? '');
    return Boolean(this.key && this.secret && supplied) && userOk && passwordOk;
  }
}
