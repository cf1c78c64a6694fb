// The SSRF guard. A webhook URL comes from a client, and the server POSTs to it: without this check a
// client could aim the server at its own network (loopback, the metadata service at 169.254.169.254,
// private ranges). Checked when a goal is submitted and again at delivery time, where the checked
// address is the one connected to, so a DNS answer that changes in between (rebinding) cannot slip in.
import { lookup as dnsLookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { LoopSmithError } from "@loopsmith/core";

type IP = ipaddr.IPv4 | ipaddr.IPv6;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** dns.lookup with `{all: true}`: every address the name resolves to. */
export type LookupAll = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface UrlCheckOptions {
  /** CIDRs (or single IPs) allowed even though they are not public unicast. */
  allowCidrs: readonly string[];
  /** Injectable for tests; defaults to the system resolver. */
  lookup?: LookupAll;
  /** How long to wait for DNS (default DEFAULT_LOOKUP_TIMEOUT_MS). */
  lookupTimeoutMs?: number;
}

/**
 * `reason` goes back to the client (the 400, a delivery's last_error) and never carries what DNS said:
 * that would let a client map the server's internal names ("postgres resolves to 172.18.0.2"). `detail`
 * has the resolver's answer, for the server's log only.
 */
export type UrlCheck = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string; detail?: string };

export const DEFAULT_LOOKUP_TIMEOUT_MS = 3000;

/**
 * Webhooks go to the web ports or to unprivileged ones: ports below 1024 other than 80 and 443 are where
 * mail, SSH, DNS and the like listen, and a POST aimed at them is never a webhook receiver.
 */
export function webhookPortAllowed(port: number): boolean {
  return port === 80 || port === 443 || (port >= 1024 && port <= 65535);
}

// Stryker disable next-line BooleanLiteral: equivalent for the guard; every address is checked, verbatim only keeps the resolver's order
const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** IPv4-mapped IPv6 (::ffff:127.0.0.1) is the IPv4 address it carries. */
function normalize(ip: IP): IP {
  return ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

// ipaddr.js calls every IPv6 address outside its named special ranges "unicast", IETF-reserved space
// included (e.g. the deprecated IPv4-compatible ::127.0.0.1 in ::/96). Public IPv6 unicast is 2000::/3.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3") as [ipaddr.IPv6, number];

function rangeOf(ip: IP): string {
  const range = ip.range();
  if (range === "unicast" && ip.kind() === "ipv6" && !(ip as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) return "reserved";
  return range;
}

function parseAllowEntry(entry: string): [IP, number] {
  const [net, bits] = entry.includes("/") ? ipaddr.parseCIDR(entry) : ([ipaddr.parse(entry), -1] as [IP, number]);
  // No prefix length: the whole address (32 bits for IPv4, 128 for IPv6).
  const width = bits < 0 ? net.toByteArray().length * 8 : bits;
  // Addresses are compared after unmapping, so a mapped allow entry (::ffff:10.0.0.0/104) is unmapped too.
  if (net.kind() === "ipv6" && (net as ipaddr.IPv6).isIPv4MappedAddress()) return [(net as ipaddr.IPv6).toIPv4Address(), Math.max(0, width - 96)];
  return [net, width];
}

function allowed(ip: IP, allow: [IP, number][]): boolean {
  return allow.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
}

export async function checkWebhookUrl(raw: string, opts: UrlCheckOptions): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: `scheme ${url.protocol} is not allowed; use http or https` };
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "credentials in the URL are not allowed" };
  // WHATWG URL keeps the brackets of an IPv6 literal and has already normalised IPv4 spellings
  // (0x7f.1, 2130706433) to dotted quads.
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  // Stryker disable next-line all: defensive; WHATWG URL gives http(s) URLs a host or refuses them
  if (host === "") return { ok: false, reason: "the URL has no host" };
  // WHATWG URL drops a scheme's default port (and refuses ports past 65535), so "" means 80 or 443.
  if (url.port !== "" && !webhookPortAllowed(Number(url.port))) return { ok: false, reason: `port ${url.port} is not allowed; use 80, 443 or 1024-65535` };

  let allowList: [IP, number][];
  try {
    allowList = opts.allowCidrs.map(parseAllowEntry);
  } catch (e) {
    return { ok: false, reason: `invalid allow list: ${(e as Error).message}` };
  }

  const literal = ipaddr.isValid(host);
  // One answer for every way a name can fail (unknown, DNS error or timeout, a non-public address), so that
  // the refusal does not tell which internal names exist either.
  const refusedName = (detail: string): UrlCheck => ({
    ok: false,
    reason: `${host} does not resolve to a public address; if it is meant to reach a private network, add that network to WEBHOOK_ALLOW_CIDRS`,
    detail: `${host}: ${detail}`,
  });
  let addresses: readonly ResolvedAddress[];
  if (literal) {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: equivalent; the family is recomputed from the parsed address below
    addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv4" ? 4 : 6 }];
  } else {
    try {
      addresses = await withTimeout((opts.lookup ?? systemLookup)(host), opts.lookupTimeoutMs ?? DEFAULT_LOOKUP_TIMEOUT_MS);
    } catch (e) {
      return refusedName(`cannot resolve: ${(e as { code?: string }).code ?? (e as Error).message}`);
    }
    if (addresses.length === 0) return refusedName("cannot resolve: no addresses");
  }

  // Every address must pass: the HTTP client (or a later lookup) might pick any of them.
  let first: { address: string; family: 4 | 6 } | undefined;
  for (const a of addresses) {
    let ip: IP;
    try {
      ip = normalize(ipaddr.parse(a.address));
    } catch {
      return refusedName(`resolved to an unparseable address ${a.address}`);
    }
    const range = rangeOf(ip);
    if (range !== "unicast" && !allowed(ip, allowList)) {
      // A literal is the client's own text: saying which range it is in tells them nothing new.
      if (literal) return { ok: false, reason: `${host} is not a public address (${range}); add it to WEBHOOK_ALLOW_CIDRS to allow it` };
      return refusedName(`resolves to ${ip.toString()} (${range})`);
    }
    first ??= { address: ip.toString(), family: ip.kind() === "ipv4" ? 4 : 6 };
  }
  return { ok: true, ...first! };
}

/** dns.lookup cannot be cancelled (it runs on libuv's thread pool); past the deadline the answer is ignored. */
async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        // Stryker disable next-line StringLiteral: equivalent; callers report the code, the message is for a debugger
        timer = setTimeout(() => reject(Object.assign(new Error(`no DNS answer within ${ms} ms`), { code: "ETIMEOUT" })), ms);
      }),
    ]);
  } finally {
    // A settled lookup must not leave its timer behind (it would hold the event loop for up to `ms`).
    clearTimeout(timer);
  }
}

/** For the API: a refused URL is a 400 with LS_ERR_WEBHOOK_URL and the reason. */
export async function assertWebhookUrl(url: string, opts: UrlCheckOptions, path = "body.webhook.url"): Promise<void> {
  const check = await checkWebhookUrl(url, opts);
  if (!check.ok) throw new LoopSmithError("LS_ERR_WEBHOOK_URL", `The webhook URL is not allowed: ${check.reason}.`, [{ path, message: check.reason }]);
}
