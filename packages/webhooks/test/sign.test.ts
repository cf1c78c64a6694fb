import { createHmac, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signWebhook } from "../src/index";

// Verified with the standardwebhooks reference library, so our signer is checked by an independent one.
const secret = () => "whsec_" + randomBytes(32).toString("base64");
const body = JSON.stringify({ type: "goal.verified", timestamp: "2026-01-01T00:00:00.000Z", data: { id: "g", note: "ünïcödé" } });
const msg = (secrets: string[]) => ({ messageId: "msg_" + randomBytes(16).toString("hex"), timestamp: new Date(), body, secrets });

describe("signWebhook (Standard Webhooks)", () => {
  it("produces headers the standardwebhooks library verifies", () => {
    const s = secret();
    const headers = signWebhook(msg([s]));
    expect(headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(s).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it("matches the reference library's own signature byte for byte", () => {
    const s = secret();
    const m = msg([s]);
    expect(signWebhook(m)["webhook-signature"]).toBe(new Webhook(s).sign(m.messageId, m.timestamp, body));
  });

  it("signs once per secret, so the old and the new secret both verify during a rotation", () => {
    const [oldS, newS] = [secret(), secret()];
    const headers = signWebhook(msg([newS, oldS]));
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(oldS).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(newS).verify(body, { ...headers })).not.toThrow();
  });

  it("fails for a tampered body, another secret, another id or a stale timestamp", () => {
    const s = secret();
    const m = msg([s]);
    const headers = signWebhook(m);
    expect(() => new Webhook(s).verify(body.replace("goal.verified", "goal.failed"), { ...headers })).toThrow(/No matching signature/);
    expect(() => new Webhook(secret()).verify(body, { ...headers })).toThrow(/No matching signature/);
    expect(() => new Webhook(s).verify(body, { ...headers, "webhook-id": "msg_other" })).toThrow(/No matching signature/);
    const old = signWebhook({ ...m, timestamp: new Date(Date.now() - 3600_000) });
    expect(() => new Webhook(s).verify(body, { ...old })).toThrow(/too old/);
  });

  it("refuses to sign with no secret", () => {
    expect(() => signWebhook(msg([]))).toThrow(/no webhook secret/);
  });

  it("refuses an empty secret, with or without the whsec_ prefix", () => {
    for (const empty of ["whsec_", "", "whsec_===="]) expect(() => signWebhook(msg([empty]))).toThrow(/webhook secret is empty/);
    // One empty secret among good ones is refused too, rather than signing with an empty key.
    expect(() => signWebhook(msg([secret(), "whsec_"]))).toThrow(/webhook secret is empty/);
  });

  it("writes each signature as v1,<base64 of 32 bytes>", () => {
    const headers = signWebhook(msg([secret(), secret()]));
    for (const part of headers["webhook-signature"].split(" ")) {
      expect(part).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(part.slice(3), "base64")).toHaveLength(32);
    }
  });

  it("the timestamp is whole seconds rounded down, whatever the clock's milliseconds", () => {
    for (const [ms, want] of [
      [1_700_000_000_000, "1700000000"],
      [1_700_000_000_499, "1700000000"],
      [1_700_000_000_500, "1700000000"],
      [1_700_000_000_999, "1700000000"],
      [1_700_000_001_000, "1700000001"],
    ] as const) {
      const m = { ...msg([secret()]), timestamp: new Date(ms) };
      const headers = signWebhook(m);
      expect(headers["webhook-timestamp"], String(ms)).toBe(want);
      // And the signature is over that same second.
      const key = Buffer.from(m.secrets[0]!.slice("whsec_".length), "base64");
      const want64 = createHmac("sha256", key).update(`${m.messageId}.${want}.${body}`, "utf8").digest("base64");
      expect(headers["webhook-signature"]).toBe(`v1,${want64}`);
    }
  });
});
