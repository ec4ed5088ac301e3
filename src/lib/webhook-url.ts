import ipaddr from "ipaddr.js";
import { validationError } from "./errors";

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach IPv4 hosts: IPv4-mapped (::ffff:0:0/96),
 * IPv4-compatible (::/96, deprecated), NAT64 (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16).
 */
function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = v6.parts;
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  if (v6.range() === "rfc6052" || p.slice(0, 6).every((w) => w === 0)) return fromWords(p[6], p[7]);
  if (v6.range() === "6to4") return fromWords(p[1], p[2]);
  return null;
}

/**
 * True when an IP literal is anything but a public unicast address, by the IANA special-purpose registries
 * as ipaddr.js classifies them (private, loopback, link-local, CGNAT, multicast, reserved, benchmarking,
 * documentation, site-local, Teredo …); an IPv6 address that carries an IPv4 one is judged by that one.
 */
function isSpecialPurpose(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() === "ipv6") {
    const inner = embeddedIpv4(address as ipaddr.IPv6);
    if (inner) return isSpecialPurpose(inner);
  }
  return address.range() !== "unicast";
}

/** True when the host names this machine or a network that is not the public internet. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname
    .toLowerCase()
    .replace(/\.$/, "")
    .replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (!ipaddr.isValid(host)) return false; // a name: Workers cannot resolve it; Cloudflare's fetch does not reach private networks
  return isSpecialPurpose(ipaddr.parse(host));
}

/** Validates a webhook address: absolute http(s), and public unless private addresses are allowed. */
export function checkWebhookUrl(raw: string, { allowPrivate }: { allowPrivate: boolean }): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError([{ field: "webhook_url", issue: "must be an absolute http(s) URL" }]);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw validationError([{ field: "webhook_url", issue: "must use http or https" }]);
  }
  if (url.username || url.password) {
    throw validationError([{ field: "webhook_url", issue: "must not carry credentials" }]);
  }
  if (!allowPrivate && isPrivateHost(url.hostname)) {
    throw validationError([{ field: "webhook_url", issue: "private, loopback, link-local and other special-purpose addresses are not allowed" }]);
  }
  return url.toString();
}
