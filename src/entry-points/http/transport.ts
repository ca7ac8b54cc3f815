import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Request } from 'restify';
import { BoundedMemo } from '../../bounded-memo';

const unmapped = (address: string) => (address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address);

/**
 * What the service may believe about a request's transport: HTTPS when it ended TLS itself, or when
 * a trusted proxy says so in X-Forwarded-Proto; the client address from X-Forwarded-For only through
 * trusted proxies.
 */
export class Transport {
  private readonly trusted = new net.BlockList();
  // A handful of proxy and client addresses recur; BlockList.check is the costly part of a request's checks.
  private readonly verdicts = new BoundedMemo<boolean>(10_000);

  constructor(trustedProxies: string[]) {
    for (const entry of trustedProxies) {
      const [address, bits] = entry.split('/');
      const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.trusted.addAddress(address, family);
      else this.trusted.addSubnet(address, Number(bits), family);
    }
  }

  private isTrusted(address: string): boolean {
    return this.verdicts.get(address, () => {
      const plain = unmapped(address);
      const family = net.isIPv6(plain) ? 'ipv6' : net.isIPv4(plain) ? 'ipv4' : undefined;
      return family !== undefined && this.trusted.check(plain, family);
    });
  }

  private peer(req: Request): string {
    return unmapped(req.socket.remoteAddress ?? '');
  }

  isHttps(req: Request): boolean {
    if ((req.socket as TLSSocket).encrypted) return true;
    if (!this.isTrusted(this.peer(req))) return false;
    const proto = req.headers['x-forwarded-proto'];
    const value = (Array.isArray(proto) ? proto[0] : proto ?? '').split(',')[0].trim().toLowerCase();
    return value === 'https';
  }

  /** The nearest address that is not one of our own proxies. */
  clientIp(req: Request): string {
    const peer = this.peer(req);
    if (!this.isTrusted(peer)) return peer;
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map((hop) => unmapped(hop.trim())).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      if (!net.isIP(hops[i])) break;
      if (!this.isTrusted(hops[i])) return hops[i];
    }
    return hops.length && net.isIP(hops[0]) ? hops[0] : peer;
  }
}
