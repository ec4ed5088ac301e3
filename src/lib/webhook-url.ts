import { validationError } from "./errors";

function ipv4Private(host: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return (
    a === 0 || a === 10 || a === 127 || a >= 224 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  );
}

function ipv6Private(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (!h.includes(":")) return false;
  if (h === "::" || h === "::1") return true;
  if (/^f[cd]/.test(h) || /^fe[89ab]/.test(h)) return true; // unique-local, link-local
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) return ipv4Private(mapped[1]);
  return /^::ffff:/.test(h); // mapped IPv4 written in hex: refuse rather than decode
}

/** True when the host names this machine or a private, loopback or link-local network. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === "localhost" || host.endsWith(".localhost") || ipv4Private(host) || ipv6Private(host);
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
    throw validationError([{ field: "webhook_url", issue: "private, loopback and link-local addresses are not allowed" }]);
  }
  return url.toString();
}
