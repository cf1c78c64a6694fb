import { randomBytes } from "node:crypto";
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
});
