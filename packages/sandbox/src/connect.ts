import Docker from "dockerode";

/**
 * A Docker client from the DOCKER_HOST setting (unix:///path, tcp://host:port, or a bare socket path);
 * unset means the default socket. Config is parsed once by the app, so this never reads process.env.
 */
export function dockerClient(dockerHost?: string): Docker {
  if (!dockerHost) return new Docker({ socketPath: "/var/run/docker.sock" });
  if (dockerHost.startsWith("unix://")) return new Docker({ socketPath: dockerHost.slice("unix://".length) });
  if (dockerHost.startsWith("/")) return new Docker({ socketPath: dockerHost });
  const url = new URL(dockerHost.replace(/^tcp:/, "http:"));
  return new Docker({ protocol: "http", host: url.hostname, port: Number(url.port || 2375) });
}
