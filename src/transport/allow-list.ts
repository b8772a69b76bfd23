// The source addresses an instrument's TCP port accepts: single addresses or CIDR blocks, IPv4 or IPv6. A peer that
// reaches an IPv6 listener over IPv4 shows as `::ffff:10.1.2.3` and is matched as 10.1.2.3.
import { BlockList, isIP } from 'node:net';

/** True when `entry` is an address (`10.1.2.3`, `fd00::7`) or a CIDR block (`10.1.2.0/24`). */
export function isAddressOrBlock(entry: string): boolean {
  const [address = '', prefix, extra] = entry.trim().split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

/** Decides whether a peer address may connect. */
export class AllowList {
  private readonly list = new BlockList();

  /** `entries` must satisfy isAddressOrBlock (the configuration schema checks it). */
  constructor(readonly entries: readonly string[]) {
    for (const entry of entries) {
      const [address = '', prefix] = entry.trim().split('/');
      const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(prefix), type);
    }
  }

  /** True when the peer's address is on the list. */
  allows(peer: string | undefined): boolean {
    if (!peer) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer);
    const address = mapped ? mapped[1]! : peer;
    const family = isIP(address);
    if (family === 0) return false;
    return this.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}
