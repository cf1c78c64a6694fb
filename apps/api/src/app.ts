import Fastify, { type FastifyInstance } from "fastify";
import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { LoopSmithError, type Logger } from "@loopsmith/core";
import { healthRoutes, type Readiness } from "./routes/health";

export interface ApiDeps {
  readiness: Readiness;
  readyCheckTimeoutMs?: number;
  /** A pino logger, or false to keep tests quiet. */
  logger?: Logger | false;
}

export const API_VERSION = "0.1.0";

/** Build the Fastify instance without listening: tests use app.inject(), server.ts calls listen(). */
export async function build(deps: ApiDeps) {
  const base: FastifyInstance = deps.logger
    ? (Fastify({ loggerInstance: deps.logger }) as unknown as FastifyInstance)
    : Fastify({ logger: false });
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "LoopSmith",
        version: API_VERSION,
        description: "Closed-loop goal executor: plan, write a program, run it in a sandbox, verify, repeat.",
      },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: "/docs" });

  app.setErrorHandler((err, req, reply) => {
    if (hasZodFastifySchemaValidationErrors(err)) {
      const details = err.validation.map((v) => ({
        path: [err.validationContext ?? "body", ...v.instancePath.split("/").filter(Boolean)].join("."),
        message: v.message ?? "invalid",
      }));
      return reply.status(400).send(new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", details).toBody());
    }
    if (err instanceof LoopSmithError) return reply.status(err.status).send(err.toBody());
    req.log.error({ err }, "unhandled error");
    return reply.status(500).send(new LoopSmithError("LS_ERR_INTERNAL").toBody());
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(new LoopSmithError("LS_ERR_NOT_FOUND", `No route ${req.method} ${req.url}.`).toBody());
  });

  await app.register(healthRoutes, { readiness: deps.readiness, timeoutMs: deps.readyCheckTimeoutMs ?? 2000 });
  return app;
}
