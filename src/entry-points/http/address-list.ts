import net from 'node:net';
import { BoundedMemo } from '../../shared/bounded-memo';

/** An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as the IPv4 address it is. */
export const unmapped = (address: string) => (address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address);

/**
 * Addresses and CIDR ranges (IPv4 and IPv6) from the configuration, such as TRUSTED_PROXIES or
 * METRICS_ALLOWED (validated when the configuration is read), and whether an address is among them.
 */
export class AddressList {
  private readonly list = new net.BlockList();
  // A handful of addresses recur; BlockList.check is the costly part of a request's checks.
  private readonly verdicts = new BoundedMemo<boolean>(10_000);

  constructor(entries: string[]) {
    for (const entry of entries) {
      const [address, bits] = entry.split('/');
      const family = net.isIPv6(address) ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(bits), family);
    }
  }

  has(address: string): boolean {
    return this.verdicts.get(address, () => {
      const plain = unmapped(address);
      const family = net.isIPv6(plain) ? 'ipv6' : net.isIPv4(plain) ? 'ipv4' : undefined;
      return family !== undefined && this.list.check(plain, family);
    });
  }
}
