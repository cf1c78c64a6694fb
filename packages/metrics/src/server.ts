// A bare /metrics endpoint for processes without an HTTP server of their own (the runner).
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Exposition } from "./prom";
import { bearerToken, tokenMatches } from "./token";

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(o: { exposition: Exposition; host: string; port: number; token?: string; onError?: (err: unknown) => void }): Promise<MetricsServer> {
  const srv = http.createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics\n");
      return;
    }
    if (o.token !== undefined && !tokenMatches(bearerToken(req.headers.authorization), o.token)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": 'Bearer realm="metrics"' }).end("send Authorization: Bearer <METRICS_TOKEN>\n");
      return;
    }
    o.exposition.text().then(
      (body) => res.writeHead(200, { "content-type": o.exposition.contentType }).end(req.method === "HEAD" ? undefined : body),
      (err: unknown) => {
        o.onError?.(err);
        res.writeHead(500, { "content-type": "text/plain" }).end("metrics collection failed\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(o.port, o.host, () => resolve());
  });
  return {
    port: (srv.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}
