import { build } from "./app";

const unused = async (): Promise<string> => {
  throw new Error("not used while generating the OpenAPI document");
};

/** The OpenAPI document exactly as the code declares it, with no connection to any service. */
export async function generateOpenApi(): Promise<string> {
  const app = await build({
    logger: false,
    readiness: { postgres: unused, redis: unused, docker: unused, sandbox_image: unused },
  });
  await app.ready();
  const doc = app.swagger();
  await app.close();
  return JSON.stringify(doc, null, 2) + "\n";
}
