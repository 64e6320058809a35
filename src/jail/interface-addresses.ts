import { createRequire } from 'node:module';

type Koffi = typeof import('koffi');

const addressFamilyInet = 2;
const addressFamilyInet6 = 10;
/** Where the address sits in `struct sockaddr_in` and `struct sockaddr_in6` (after the family and port; after the flow info). */
const inetAddressOffset = 4;
const inet6AddressOffset = 8;

export interface InterfaceAddress {
  family: 'inet' | 'inet6';
  /** As `ip` prints it: dotted quad, or RFC 5952's short form. */
  address: string;
}

/** Reads every address of every interface, up or down; undefined where getifaddrs(3) cannot be reached. */
export type ReadInterfaceAddresses = () => InterfaceAddress[] | undefined;

/**
 * getifaddrs(3) through koffi: the same netlink listing `ip -j address` prints, read in this
 * process, without starting one. Unlike os.networkInterfaces() it keeps the interfaces that are
 * down or without carrier. Undefined (and not tried again) where koffi or the call is missing.
 */
export function bindInterfaceAddresses(): ReadInterfaceAddresses {
  if (process.platform !== 'linux') return () => undefined;
  let koffi: Koffi;
  let list: () => InterfaceAddress[];
  try {
    // Loaded here rather than imported, as in process-hardening/libc.ts: a platform without koffi's binary still runs `ip`.
    koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const library = koffi.load(null);
    const entryType = koffi.struct({
      next: 'void *',
      name: 'void *',
      flags: 'unsigned int',
      address: 'void *',
      netmask: 'void *',
      broadcastOrDestination: 'void *',
      data: 'void *',
    });
    const getifaddrs = library.func('int getifaddrs(_Out_ void **list)');
    const freeifaddrs = library.func('void freeifaddrs(void *list)');
    list = () => {
      const head: unknown[] = [null];
      if (getifaddrs(head) !== 0) throw new Error(`getifaddrs failed with errno ${koffi.errno()}`);
      const found: InterfaceAddress[] = [];
      try {
        for (let entry = head[0]; entry; ) {
          const fields = koffi.decode(entry, entryType) as { next: unknown; address: unknown };
          if (fields.address) {
            const family = koffi.decode(fields.address, 'uint16_t') as number;
            if (family === addressFamilyInet) found.push({ family: 'inet', address: ipv4Text(koffi.decode(fields.address, inetAddressOffset, 'uint8_t', 4)) });
            if (family === addressFamilyInet6) found.push({ family: 'inet6', address: ipv6Text(koffi.decode(fields.address, inet6AddressOffset, 'uint8_t', 16)) });
          }
          entry = fields.next;
        }
      } finally {
        freeifaddrs(head[0]);
      }
      return found;
    };
    list();
  } catch {
    return () => undefined;
  }
  return list;
}

function ipv4Text(bytes: ArrayLike<number>): string {
  return Array.from(bytes).join('.');
}

/** RFC 5952's form (lower case, the longest run of zero groups as `::`), which the URL parser writes. */
function ipv6Text(bytes: ArrayLike<number>): string {
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) groups.push(((bytes[index]! << 8) | bytes[index + 1]!).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
