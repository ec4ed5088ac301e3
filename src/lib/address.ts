import ipaddr from "ipaddr.js";

/** Longest key kept for an address the platform did not give in a form we recognise (never in production). */
const MAX_RAW = 64;

/**
 * The client the per-address limits count: an IPv4 address as it is; an IPv6 address by its /64, the smallest
 * network a host is usually given (one subscriber holds a whole /64, so counting exact IPv6 strings would give
 * it 2^64 allowances); an IPv4-mapped IPv6 address as its IPv4 address. `cf-connecting-ip` is one address, so
 * IPv4 (the common case) costs one `includes` and no parse.
 */
export function addressKey(ip: string | undefined | null): string {
  if (!ip) return "unknown";
  if (!ip.includes(":")) return ip.length > MAX_RAW ? ip.slice(0, MAX_RAW) : ip;
  try {
    const v6 = ipaddr.IPv6.parse(ip);
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    const [a, b, c, d] = v6.parts;
    return `${a.toString(16)}:${b.toString(16)}:${c.toString(16)}:${d.toString(16)}::/64`;
  } catch {
    return ip.slice(0, MAX_RAW);
  }
}
