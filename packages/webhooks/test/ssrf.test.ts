import { describe, expect, it } from "vitest";
import { assertWebhookUrl, checkWebhookUrl, type LookupAll } from "../src/index";
import { noDns, resolvesTo } from "./lookups";

const noAllow = { allowCidrs: [] as string[] };

describe("checkWebhookUrl refuses what is not public unicast", () => {
  it.each([
    ["http://127.0.0.1/hook", "loopback"],
    ["http://127.1.2.3:8080/hook", "loopback"],
    ["http://10.0.0.1/hook", "private"],
    ["http://192.168.1.1/hook", "private"],
    ["http://172.16.0.1/hook", "private"],
    ["http://169.254.169.254/latest/meta-data/", "linkLocal"],
    ["http://[::1]/hook", "loopback"],
    ["http://[::ffff:127.0.0.1]/hook", "loopback"],
    ["http://[::ffff:169.254.169.254]/hook", "linkLocal"],
    ["http://[fd00::1]/hook", "uniqueLocal"],
    ["http://[fe80::1]/hook", "linkLocal"],
    ["http://0.0.0.0/hook", "unspecified"],
    ["http://[::]/hook", "unspecified"],
    ["http://100.64.0.1/hook", "carrierGradeNat"],
    ["http://255.255.255.255/hook", "broadcast"],
    ["http://224.0.0.1/hook", "multicast"],
    // Other spellings of 127.0.0.1 that WHATWG URL normalises.
    ["http://2130706433/hook", "loopback"],
    ["http://0x7f.1/hook", "loopback"],
  ])("%s (%s)", async (url, range) => {
    const r = await checkWebhookUrl(url, { ...noAllow, lookup: noDns });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(`(${range})`);
  });

  it("refuses localhost through the system resolver", async () => {
    const r = await checkWebhookUrl("http://localhost:3000/hook", noAllow);
    expect(r).toMatchObject({ ok: false });
    if (!r.ok) {
      expect(r.reason).toMatch(/^localhost does not resolve to a public address/);
      expect(r.detail).toMatch(/localhost: resolves to (127\.0\.0\.1|::1) \(loopback\)/);
    }
  });

  // Issue 17: the reason goes back to the client, and what DNS said about the server's own names
  // ("postgres resolves to 172.18.0.2") must not; the resolver's answer is only in `detail`, for the log.
  const nameRefused = (host: string) =>
    `${host} does not resolve to a public address; if it is meant to reach a private network, add that network to WEBHOOK_ALLOW_CIDRS`;

  it("refuses a name that resolves to a private address without saying which", async () => {
    const r = await checkWebhookUrl("https://postgres/x", { ...noAllow, lookup: resolvesTo("172.18.0.2") });
    expect(r).toEqual({ ok: false, reason: nameRefused("postgres"), detail: "postgres: resolves to 172.18.0.2 (private)" });
  });

  it("refuses a name when ANY of its addresses is private, even if the first is public", async () => {
    const r = await checkWebhookUrl("https://hooks.example.com/x", { ...noAllow, lookup: resolvesTo("93.184.216.34", "::ffff:192.168.0.5") });
    expect(r).toMatchObject({ ok: false, reason: nameRefused("hooks.example.com") });
    if (!r.ok) {
      expect(r.reason).not.toContain("192.168");
      expect(r.detail).toContain("192.168.0.5");
    }
  });

  it("refuses a name that does not resolve with the same answer as a private one (no oracle for internal names)", async () => {
    const nx: LookupAll = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.invalid"), { code: "ENOTFOUND" });
    };
    expect(await checkWebhookUrl("https://nowhere.invalid/x", { ...noAllow, lookup: nx })).toEqual({
      ok: false,
      reason: nameRefused("nowhere.invalid"),
      detail: "nowhere.invalid: cannot resolve: ENOTFOUND",
    });
    expect(await checkWebhookUrl("https://empty.example/x", { ...noAllow, lookup: resolvesTo() })).toEqual({
      ok: false,
      reason: nameRefused("empty.example"),
      detail: "empty.example: cannot resolve: no addresses",
    });
  });

  it("gives up on DNS after lookupTimeoutMs", async () => {
    const hangs: LookupAll = () => new Promise(() => undefined);
    const started = Date.now();
    const r = await checkWebhookUrl("https://slow.example/x", { ...noAllow, lookup: hangs, lookupTimeoutMs: 200 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r).toEqual({ ok: false, reason: nameRefused("slow.example"), detail: "slow.example: cannot resolve: ETIMEOUT" });
  });

  it("leaves no timer behind once the lookup has answered", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const before = timers();
    const r = await checkWebhookUrl("https://fast.example/x", { ...noAllow, lookup: resolvesTo("93.184.216.34"), lookupTimeoutMs: 60_000 });
    expect(r.ok).toBe(true);
    expect(timers()).toBe(before);
  });

  it.each([
    ["http://93.184.216.34:22/x", "22"],
    ["http://93.184.216.34:25/x", "25"],
    ["https://93.184.216.34:1023/x", "1023"],
    ["http://93.184.216.34:0/x", "0"],
    ["https://93.184.216.34:6379/x", null],
    ["https://93.184.216.34:8443/x", null],
    ["http://93.184.216.34:443/x", null],
    ["https://93.184.216.34:80/x", null],
    ["http://93.184.216.34:1024/x", null],
  ])("ports: %s", async (url, refused) => {
    const r = await checkWebhookUrl(url, { ...noAllow, lookup: noDns });
    if (refused === null) expect(r.ok).toBe(true);
    else expect(r).toEqual({ ok: false, reason: `port ${refused} is not allowed; use 80, 443 or 1024-65535` });
  });

  it.each([
    ["ftp://93.184.216.34/x", /scheme ftp: is not allowed/],
    ["file:///etc/passwd", /scheme file: is not allowed/],
    ["gopher://93.184.216.34/x", /scheme gopher: is not allowed/],
    ["http://user:pass@93.184.216.34/x", /credentials in the URL/],
    ["http://user@93.184.216.34/x", /credentials in the URL/],
    ["not a url", /not a valid URL/],
  ])("refuses %s", async (url, reason) => {
    const r = await checkWebhookUrl(url, { ...noAllow, lookup: noDns });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });
});

describe("checkWebhookUrl allows", () => {
  it("a public IPv4 literal, returning it as the address to connect to", async () => {
    expect(await checkWebhookUrl("https://93.184.216.34/hook", { ...noAllow, lookup: noDns })).toEqual({ ok: true, address: "93.184.216.34", family: 4 });
  });

  it("a public IPv6 literal", async () => {
    expect(await checkWebhookUrl("https://[2606:2800:220:1::1]/hook", { ...noAllow, lookup: noDns })).toEqual({
      ok: true,
      address: "2606:2800:220:1::1",
      family: 6,
    });
  });

  it("a name whose addresses are all public, connecting to the first", async () => {
    const r = await checkWebhookUrl("https://hooks.example.com/x", { ...noAllow, lookup: resolvesTo("93.184.216.34", "2606:2800:220:1::1") });
    expect(r).toEqual({ ok: true, address: "93.184.216.34", family: 4 });
  });

  it("127.0.0.1 when 127.0.0.1/32 is in the allow list, and only that address", async () => {
    const opts = { allowCidrs: ["127.0.0.1/32"], lookup: noDns };
    expect(await checkWebhookUrl("http://127.0.0.1:9999/hook", opts)).toEqual({ ok: true, address: "127.0.0.1", family: 4 });
    expect(await checkWebhookUrl("http://[::ffff:127.0.0.1]:9999/hook", opts)).toEqual({ ok: true, address: "127.0.0.1", family: 4 });
    expect((await checkWebhookUrl("http://127.0.0.2/hook", opts)).ok).toBe(false);
    expect((await checkWebhookUrl("http://[::1]/hook", opts)).ok).toBe(false);
  });

  it("single IPs and CIDRs of both families in the allow list", async () => {
    const opts = { allowCidrs: ["10.0.0.0/8", "::1", "192.168.1.7"], lookup: resolvesTo("10.200.0.1") };
    expect(await checkWebhookUrl("http://internal.corp/x", opts)).toEqual({ ok: true, address: "10.200.0.1", family: 4 });
    expect((await checkWebhookUrl("http://[::1]/x", opts)).ok).toBe(true);
    expect((await checkWebhookUrl("http://192.168.1.7/x", opts)).ok).toBe(true);
    expect((await checkWebhookUrl("http://192.168.1.8/x", opts)).ok).toBe(false);
  });
});

describe("assertWebhookUrl", () => {
  it("throws LS_ERR_WEBHOOK_URL (400) with the reason and the field path", async () => {
    const err = await assertWebhookUrl("http://169.254.169.254/", noAllow).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({
      code: "LS_ERR_WEBHOOK_URL",
      status: 400,
      details: [{ path: "body.webhook.url", message: "169.254.169.254 is not a public address (linkLocal); add it to WEBHOOK_ALLOW_CIDRS to allow it" }],
    });
  });

  it("passes a public URL", async () => {
    await expect(assertWebhookUrl("https://93.184.216.34/hook", noAllow)).resolves.toBeUndefined();
  });
});
