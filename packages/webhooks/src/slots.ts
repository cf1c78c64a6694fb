// Per-tenant delivery slots: how many webhook POSTs of one tenant may be in flight at once, across every
// runner's delivery worker. Without it a tenant whose receiver hangs until the timeout holds every worker
// slot with its retries and every other tenant's webhooks wait behind it.
//
// A slot is a lease in a Redis sorted set per tenant (member: the attempt, score: when the lease lapses),
// taken and counted in one script, so that two workers cannot both take the last slot. A worker that dies
// mid-POST cannot leak its slot for good: the lease lapses on its own after leaseMs.
import type { Redis } from "ioredis";

export interface DeliverySlots {
  /** Takes one of the tenant's slots for `holder`; false when they are all taken. */
  acquire(tenantId: string, holder: string): Promise<boolean>;
  release(tenantId: string, holder: string): Promise<void>;
}

// KEYS[1]: the tenant's set. ARGV: holder, cap, lease (ms). Redis's own clock, so workers' clocks may differ.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], lease)
  return 1
end
return 0
`;

export function redisDeliverySlots(redis: Redis, o: { prefix: string; perTenant: number; leaseMs: number }): DeliverySlots {
  const key = (tenantId: string) => `${o.prefix}:webhook-slots:${tenantId}`;
  return {
    async acquire(tenantId, holder) {
      if (o.perTenant <= 0) return true;
      return (await redis.eval(ACQUIRE, 1, key(tenantId), holder, String(o.perTenant), String(o.leaseMs))) === 1;
    },
    async release(tenantId, holder) {
      if (o.perTenant <= 0) return;
      await redis.zrem(key(tenantId), holder);
    },
  };
}
