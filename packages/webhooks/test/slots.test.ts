// issue 17.3: per-tenant delivery slots are leases in Redis: a cap per tenant shared by every worker,
// released after each attempt, and lapsing by themselves when a worker dies holding one.
import { afterAll, describe, expect, it } from "vitest";
import { redisDeliverySlots } from "../src/index";
import { deleteKeys, randomPrefix, services } from "./support";

const { prisma, redis } = services();
const prefix = randomPrefix("slots");
afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
  await prisma.$disconnect();
});

describe("redisDeliverySlots", () => {
  it("gives a tenant at most its cap, others their own, and a released slot to the next", async () => {
    const slots = redisDeliverySlots(redis, { prefix, perTenant: 2, leaseMs: 60_000 });
    // Concurrent takers (as from several workers): exactly two win.
    const won = await Promise.all(["a1", "a2", "a3", "a4"].map((h) => slots.acquire("tenant-a", h)));
    expect(won.filter(Boolean)).toHaveLength(2);
    expect(await slots.acquire("tenant-b", "b1")).toBe(true);
    const holder = ["a1", "a2", "a3", "a4"][won.indexOf(true)]!;
    await slots.release("tenant-a", holder);
    expect(await slots.acquire("tenant-a", "a5")).toBe(true);
    expect(await slots.acquire("tenant-a", "a6")).toBe(false);
  });

  it("lets a slot whose holder never released it lapse after the lease", async () => {
    const slots = redisDeliverySlots(redis, { prefix, perTenant: 1, leaseMs: 300 });
    expect(await slots.acquire("tenant-c", "dead-worker")).toBe(true);
    expect(await slots.acquire("tenant-c", "live")).toBe(false);
    await new Promise((r) => setTimeout(r, 400));
    expect(await slots.acquire("tenant-c", "live")).toBe(true);
  });

  it("takes no slot at all with a cap of 0 (no limit)", async () => {
    const slots = redisDeliverySlots(redis, { prefix, perTenant: 0, leaseMs: 1000 });
    for (let i = 0; i < 10; i++) expect(await slots.acquire("tenant-d", `h${i}`)).toBe(true);
    expect(await redis.exists(`${prefix}:webhook-slots:tenant-d`)).toBe(0);
  });
});
