// The SSRF guard at its edges: every special range refused (one exempted range in the code would fail
// here), port boundaries, allow-list entries in every form, and the refusals that need no DNS at all.
import { describe, expect, it } from "vitest";
import { assertWebhookUrl, checkWebhookUrl, webhookPortAllowed } from "../src/index";
import { noDns, resolvesTo } from "./lookups";


describe("special ranges are refused, as literals and as what a name resolves to", () => {
  it.each([
    ["240.0.0.1", "reserved"], // IPv4 class E
    ["198.18.0.1", "reserved"], // benchmarking 198.18/15
    ["198.19.255.1", "reserved"],
    ["192.0.2.1", "reserved"], // documentation
    ["198.51.100.1", "reserved"],
    ["203.0.113.1", "reserved"],
    ["192.0.0.1", "reserved"], // IETF protocol assignments
    ["0.1.2.3", "unspecified"], // "this network" 0/8
    ["2002::1", "6to4"],
    ["64:ff9b::1", "rfc6052"], // NAT64
    ["2001::1", "teredo"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"], // documentation
    ["100::1", "discard"],
    ["::7f00:1", "reserved"], // ::127.0.0.1, IPv4-compatible (deprecated): not ::ffff:127.0.0.1, but never public either
    ["4000::1", "reserved"], // "unicast" to ipaddr.js, but outside global unicast 2000::/3
  ])("%s (%s)", async (address, range) => {
    const host = address.includes(":") ? `[${address}]` : address;
    const literal = await checkWebhookUrl(`https://${host}/hook`, { allowCidrs: [], lookup: noDns });
    // The reason names the host as the URL parser normalised it (::127.0.0.1 is written ::7f00:1).
    const shown = new URL(`https://${host}/`).hostname.replace(/^\[|\]$/g, "");
    expect(literal).toEqual({ ok: false, reason: `${shown} is not a public address (${range}); add it to WEBHOOK_ALLOW_CIDRS to allow it` });
    const named = await checkWebhookUrl("https://hooks.example.com/x", { allowCidrs: [], lookup: resolvesTo(address) });
    expect(named.ok).toBe(false);
    if (!named.ok) {
      expect(named.reason).not.toContain(address);
      expect(named.detail).toContain(`(${range})`);
    }
  });

  it("global unicast IPv6 passes (the 2000::/3 rule does not refuse everything)", async () => {
    expect(await checkWebhookUrl("https://[2a00:1450:4001::1]/x", { allowCidrs: [], lookup: noDns })).toEqual({ ok: true, address: "2a00:1450:4001::1", family: 6 });
    expect(await checkWebhookUrl("https://hooks.example.com/x", { allowCidrs: [], lookup: resolvesTo("2a00:1450:4001::1") })).toEqual({
      ok: true,
      address: "2a00:1450:4001::1",
      family: 6,
    });
  });
});

describe("ports", () => {
  it("80, 443 and 1024-65535 exactly", () => {
    for (const p of [80, 443, 1024, 8080, 65535]) expect(webhookPortAllowed(p), String(p)).toBe(true);
    for (const p of [0, 1, 22, 79, 81, 442, 444, 1023, 65536, 70000, -1]) expect(webhookPortAllowed(p), String(p)).toBe(false);
  });

  it("the URL's own port limit: 65535 passes, 65536 is not a URL", async () => {
    expect((await checkWebhookUrl("https://93.184.216.34:65535/x", { allowCidrs: [], lookup: noDns })).ok).toBe(true);
    expect(await checkWebhookUrl("https://93.184.216.34:65536/x", { allowCidrs: [], lookup: noDns })).toEqual({ ok: false, reason: "not a valid URL" });
  });
});

describe("the allow list", () => {
  const check = (url: string, allowCidrs: string[], ...resolved: string[]) =>
    checkWebhookUrl(url, { allowCidrs, lookup: resolved.length ? resolvesTo(...resolved) : noDns });

  it("a CIDR covers its whole network and nothing outside it, in both families", async () => {
    expect((await check("http://10.255.255.255/x", ["10.0.0.0/8"])).ok).toBe(true);
    expect((await check("http://11.0.0.1/x", ["10.0.0.0/8"])).ok).toBe(true); // public anyway
    expect((await check("http://172.16.0.1/x", ["10.0.0.0/8"])).ok).toBe(false);
    expect((await check("http://[fd00::abcd]/x", ["fd00::/64"])).ok).toBe(true);
    expect((await check("http://[fd00:0:0:1::1]/x", ["fd00::/64"])).ok).toBe(false);
  });

  it("a single address is a /32 or a /128: its neighbours stay refused", async () => {
    expect((await check("http://192.168.1.7/x", ["192.168.1.7"])).ok).toBe(true);
    expect((await check("http://192.168.1.6/x", ["192.168.1.7"])).ok).toBe(false);
    expect((await check("http://[fd00::7]/x", ["fd00::7"])).ok).toBe(true);
    expect((await check("http://[fd00::8]/x", ["fd00::7"])).ok).toBe(false);
  });

  it("a /0 allows every address of its family only", async () => {
    expect((await check("http://10.1.2.3/x", ["0.0.0.0/0"])).ok).toBe(true);
    expect((await check("http://[fd00::1]/x", ["0.0.0.0/0"])).ok).toBe(false);
    expect((await check("http://[fd00::1]/x", ["::/0"])).ok).toBe(true);
  });

  it("an IPv4-mapped entry allows the IPv4 network it carries", async () => {
    expect((await check("http://10.9.8.7/x", ["::ffff:10.0.0.0/104"])).ok).toBe(true);
    expect((await check("http://10.9.8.7/x", [], "::ffff:10.9.8.7")).ok).toBe(false);
    expect((await check("http://internal.corp/x", ["::ffff:10.0.0.0/104"], "::ffff:10.9.8.7")).ok).toBe(true);
    expect((await check("http://172.16.0.1/x", ["::ffff:10.0.0.0/104"])).ok).toBe(false);
    expect((await check("http://10.9.8.7/x", ["::ffff:10.9.8.7"])).ok).toBe(true);
    expect((await check("http://10.9.8.6/x", ["::ffff:10.9.8.7"])).ok).toBe(false);
  });

  it("an invalid entry refuses every URL, saying the allow list is invalid", async () => {
    for (const bad of ["10.0.0.0/33", "not-an-ip", "fd00::/129", ""]) {
      const r = await check("https://93.184.216.34/x", [bad]);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/^invalid allow list: /);
    }
  });
});

describe("refusals before any address is looked at", () => {
  it("no host, credentials, and an address DNS cannot have meant", async () => {
    expect(await checkWebhookUrl("http://user@93.184.216.34/x", { allowCidrs: [], lookup: noDns })).toEqual({ ok: false, reason: "credentials in the URL are not allowed" });
    expect(await checkWebhookUrl("http://:pw@93.184.216.34/x", { allowCidrs: [], lookup: noDns })).toEqual({ ok: false, reason: "credentials in the URL are not allowed" });
    const unparseable = await checkWebhookUrl("https://hooks.example.com/x", { allowCidrs: [], lookup: resolvesTo("not-an-address") });
    expect(unparseable).toMatchObject({ ok: false, detail: "hooks.example.com: resolved to an unparseable address not-an-address" });
  });
});

describe("assertWebhookUrl", () => {
  it("its message quotes the reason, and a custom field path is kept", async () => {
    const err = await assertWebhookUrl("http://10.0.0.1/x", { allowCidrs: [] }, "body.webhooks.0.url").then(
      () => null,
      (e: unknown) => e as { message: string; details: unknown },
    );
    expect(err?.message).toBe("The webhook URL is not allowed: 10.0.0.1 is not a public address (private); add it to WEBHOOK_ALLOW_CIDRS to allow it.");
    expect(err?.details).toEqual([{ path: "body.webhooks.0.url", message: "10.0.0.1 is not a public address (private); add it to WEBHOOK_ALLOW_CIDRS to allow it" }]);
  });
});
