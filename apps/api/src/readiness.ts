import type { Redis } from "ioredis";
import type Docker from "dockerode";
import { LoopSmithError } from "@loopsmith/core";
import type { PrismaClient } from "@loopsmith/db";
import { imageExists, pingDocker } from "@loopsmith/sandbox";
import type { Readiness } from "./routes/health";

export function realReadiness(deps: { prisma: PrismaClient; redis: Redis; docker: Docker; sandboxImage: string }): Readiness {
  return {
    // Probes throw the dependency's own error (logged in full, shown as publicError in /readyz).
    postgres: async () => {
      await deps.prisma.$queryRaw`SELECT 1`;
      return "SELECT 1 answered";
    },
    redis: async () => {
      const pong = await deps.redis.ping();
      return `PING answered ${pong}`;
    },
    docker: async () => {
      await pingDocker(deps.docker);
      return "engine answered /_ping";
    },
    sandbox_image: async () => {
      if (!(await imageExists(deps.docker, deps.sandboxImage))) {
        throw new LoopSmithError("LS_ERR_SANDBOX_UNAVAILABLE", `image ${deps.sandboxImage} is missing: run npm run sandbox:image`);
      }
      return `image ${deps.sandboxImage} present`;
    },
  };
}
