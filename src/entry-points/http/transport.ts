import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Request } from 'restify';
import { AddressList, unmapped } from './address-list';

/** Where a request keeps its client's address once it has been worked out (the route and the access log both ask). */
const CLIENT_IP = Symbol('clientIp');
type WithClientIp = Request & { [CLIENT_IP]?: string };

/**
 * What the service may believe about a request's transport: HTTPS when it ended TLS itself, or when
 * a trusted proxy says so in X-Forwarded-Proto; the client address from X-Forwarded-For only through
 * trusted proxies.
 */
export class Transport {
  private readonly trusted: AddressList;

  constructor(trustedProxies: string[]) {
    this.trusted = new AddressList(trustedProxies);
  }

  private peer(req: Request): string {
    return unmapped(req.socket.remoteAddress ?? '');
  }

  /** Whether the request came straight from one of our own proxies, whose headers are believed. */
  fromTrustedProxy(req: Request): boolean {
    return this.trusted.has(this.peer(req));
  }

  isHttps(req: Request): boolean {
    if ((req.socket as TLSSocket).encrypted) return true;
    if (!this.fromTrustedProxy(req)) return false;
    const proto = req.headers['x-forwarded-proto'];
    const value = (Array.isArray(proto) ? proto[0] : proto ?? '').split(',')[0].trim().toLowerCase();
    return value === 'https';
  }

  /**
   * The nearest address that is not one of our own proxies: X-Forwarded-For is read only when the peer
   * is a trusted proxy, from the right, hop by hop while each is trusted. A hop that is no address
   * ends the walk at the last address known (a trusted proxy's), never at a hop further left, which
   * whoever sent the request could have written.
   */
  clientIp(req: Request): string {
    return ((req as WithClientIp)[CLIENT_IP] ??= this.nearestUntrusted(req));
  }

  private nearestUntrusted(req: Request): string {
    let known = this.peer(req);
    if (!this.trusted.has(known)) return known;
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map(hopAddress).filter((hop) => hop !== '');
    for (let i = hops.length - 1; i >= 0; i--) {
      if (!net.isIP(hops[i])) return known;
      known = hops[i];
      if (!this.trusted.has(known)) return known;
    }
    return known;
  }

  /**
   * The client as attempt limits see it: its address, or for IPv6 its /64, the block one subscriber
   * usually holds whole (anyone can rotate through the addresses of their own /64).
   */
  clientGroup(req: Request): string {
    return addressGroup(this.clientIp(req));
  }
}

/** One X-Forwarded-For hop as an address: trimmed, without a port (`1.2.3.4:80`, `[2001:db8::1]:80`), unmapped. */
function hopAddress(hop: string): string {
  const text = hop.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return unmapped(bracketed[1]);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(text);
  return unmapped(withPort ? withPort[1] : text);
}

/** An IPv4 address as it is; an IPv6 address as its /64 (`2001:db8:1:2::/64`). */
export function addressGroup(address: string): string {
  // Every IPv6 address has a colon, and no IPv4 address does: most clients skip the costly check.
  if (!address.includes(':') || !net.isIPv6(address)) return address;
  const hextets = expandIpv6(address.split('%')[0]);
  return hextets ? `${hextets.slice(0, 4).map((h) => h.toString(16)).join(':')}::/64` : address;
}

/** The eight 16-bit groups of an IPv6 address (`::` and a dotted IPv4 tail allowed), or null. */
function expandIpv6(address: string): number[] | null {
  const groups = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((group) => {
      if (!group.includes('.')) return [parseInt(group, 16)];
      const [a, b, c, d] = group.split('.').map(Number);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const [head, tail, extra] = address.split('::');
  if (extra !== undefined) return null;
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  const all = [...left, ...new Array(missing).fill(0), ...right];
  return all.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? all : null;
}
