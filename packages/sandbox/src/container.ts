// Container lifecycle: the hardened options every sandbox container gets, its labels and name, creating and
// removing it, and finding the containers a dead runner left behind.
import type Docker from "dockerode";
import { BOOTSTRAP_CAPS, MiB, SANDBOX_WORKDIR, type RunPurpose, type SandboxLimits, type SandboxLog } from "./types";

export const SANDBOX_LABEL = "loopsmith.sandbox";
/**
 * Labels each container with its RunRequest.purpose, so that what ran can be counted by kind. A pool
 * container is labelled POOL_PURPOSE (labels are fixed at creation) and renamed for its purpose when
 * handed out: sandboxPurpose reads either.
 */
export const PURPOSE_LABEL = "loopsmith.purpose";
export const RUNNER_LABEL = "loopsmith.runner";
/** Epoch ms after which the container has outlived its run's timeout: whoever finds it may remove it. */
export const DEADLINE_LABEL = "loopsmith.deadline";
/**
 * Where the owner's liveness can be judged (the runner's queue prefix: heartbeats live there). Runners of
 * other namespaces may share the Docker engine; their heartbeats are invisible from here.
 */
export const NAMESPACE_LABEL = "loopsmith.namespace";
/** The margin between a run's timeout and its container's DEADLINE_LABEL. */
export const DEADLINE_SLACK_MS = 60_000;

/** Container names carry the purpose too: a pool container's labels are fixed before its purpose is known. */
export const SANDBOX_NAME_PREFIX = "loopsmith-";
/** PURPOSE_LABEL of a container created for the pool; its name says what it was used for (see sandboxPurpose). */
export const POOL_PURPOSE = "pool";
/** The purpose in an idle pool container's name. */
export const IDLE = "idle";

/**
 * What a sandbox container is (or was) for, from its name (`loopsmith-<purpose>-<id>`; a pool container is
 * renamed when it is handed out) or, for containers named otherwise, its label. "idle": waiting in the pool.
 */
export function sandboxPurpose(c: { Names?: string[]; Labels?: Record<string, string> }): RunPurpose | "idle" | undefined {
  const name = (c.Names?.[0] ?? "").replace(/^\//, "");
  const m = /^loopsmith-(program|check|probe|idle)-[0-9a-f]+$/.exec(name);
  if (m) return m[1] as RunPurpose | "idle";
  const label = c.Labels?.[PURPOSE_LABEL];
  return label === "program" || label === "check" || label === "probe" ? label : undefined;
}

export async function pingDocker(docker: Docker): Promise<void> {
  try {
    await docker.ping();
  } catch (e) {
    throw new Error(`Docker engine unreachable: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Removes sandbox containers left behind by a runner that died: those of `runnerId`, or every runner's when
 * omitted. Several runners may share one engine, so `olderThanMs` (longer than any run's timeout) spares
 * containers that a live runner is still using.
 */
export async function removeLeftovers(
  docker: Docker,
  opts: {
    runnerId?: string;
    olderThanMs?: number;
    /** Remove only containers whose runner is not alive (or whose deadline passed); spares the live ones. */
    isAlive?: (runnerId: string) => Promise<boolean>;
    /**
     * With isAlive: the namespace isAlive can speak for. Containers of another namespace (or of none) are
     * spared until their deadline passes, since their runner's heartbeat cannot be seen from here.
     */
    namespace?: string;
  } = {},
): Promise<number> {
  const label = [`${SANDBOX_LABEL}=1`];
  if (opts.runnerId !== undefined) label.push(`${RUNNER_LABEL}=${opts.runnerId}`);
  const found = await docker.listContainers({ all: true, filters: { label } });
  const cutoff = Date.now() - (opts.olderThanMs ?? 0);
  let removed = 0;
  for (const c of found) {
    if (c.Created * 1000 > cutoff) continue;
    if (opts.isAlive) {
      const owner = c.Labels?.[RUNNER_LABEL] ?? "";
      const deadline = Number(c.Labels?.[DEADLINE_LABEL] ?? "NaN");
      const overdue = Number.isFinite(deadline) && deadline < Date.now();
      const foreign = opts.namespace !== undefined && c.Labels?.[NAMESPACE_LABEL] !== opts.namespace;
      if (!overdue && (foreign || (owner && (await opts.isAlive(owner))))) continue;
    }
    try {
      await docker.getContainer(c.Id).remove({ force: true });
      removed++;
    } catch (e) {
      if (!isGone(e)) throw e;
    }
  }
  return removed;
}

/**
 * Host processes gVisor's ptrace platform spends per task of the sandbox's own (measured: a fork loop under
 * runsc needs about 7-8 host pids per child; with fewer, the Sentry cannot start a thread and the whole
 * sandbox dies with status 2, printing nothing).
 */
export const GVISOR_HOST_PIDS_PER_TASK = 8;

/**
 * The process limit as each runtime enforces it. runc: the container's pids cgroup counts the program's
 * tasks on the host's kernel, and a fork past it fails with EAGAIN (RLIMIT_NPROC cannot serve: on a shared
 * kernel it counts a uid's processes in every container). runsc: the sandbox's own kernel enforces
 * RLIMIT_NPROC per uid inside this sandbox alone (refusing a task past the limit, not at it), so the program
 * (and the judge, a uid of its own) meets EAGAIN below `pidsLimit` tasks as under runc, and the host's pids cgroup, which counts the Sentry's threads, gets
 * room for both uids at their limit.
 */
export function processLimits(limits: Readonly<SandboxLimits>, ociRuntime: string): Pick<Docker.HostConfig, "PidsLimit"> & { nproc?: number } {
  if (ociRuntime !== "runsc") return { PidsLimit: limits.pidsLimit };
  return { PidsLimit: 2 * limits.pidsLimit * GVISOR_HOST_PIDS_PER_TASK + 64, nproc: limits.pidsLimit - 1 };
}

/**
 * Whether the bootstrap copies the program's output out through pipes of its own: under gVisor a write to
 * the container's stdout may take only part of what it was given, which Python's buffered writer loses.
 */
export function relaysOutput(ociRuntime: string): boolean {
  return ociRuntime === "runsc";
}

/** Everything about a sandbox container that does not depend on the request. */
function hostConfig(limits: Readonly<SandboxLimits>, ociRuntime: string): Docker.HostConfig {
  const { PidsLimit, nproc } = processLimits(limits, ociRuntime);
  return {
    // The OCI runtime the engine starts the container with: runc (namespaces and cgroups of the host's
    // kernel) or runsc (gVisor: a kernel of its own in user space between the program and the host's).
    Runtime: ociRuntime,
    NetworkMode: "none",
    ReadonlyRootfs: true,
    Tmpfs: {
      // Root's until the bootstrap has placed the request's files and handed each to its owner.
      [SANDBOX_WORKDIR]: `rw,nosuid,nodev,noexec,size=${limits.workTmpfsBytes},uid=0,gid=0,mode=0755`,
      "/tmp": `rw,nosuid,nodev,noexec,size=${limits.tmpTmpfsBytes},mode=1777`,
    },
    CapDrop: ["ALL"],
    CapAdd: BOOTSTRAP_CAPS,
    SecurityOpt: ["no-new-privileges"],
    Privileged: false,
    PidsLimit,
    Memory: limits.memoryBytes,
    MemorySwap: limits.memoryBytes,
    NanoCpus: limits.nanoCpus,
    IpcMode: "private",
    ShmSize: 16 * MiB,
    Ulimits: [
      { Name: "nofile", Soft: limits.nofile, Hard: limits.nofile },
      { Name: "fsize", Soft: limits.fileSizeBytes, Hard: limits.fileSizeBytes },
      { Name: "core", Soft: 0, Hard: 0 },
      ...(nproc !== undefined ? [{ Name: "nproc", Soft: nproc, Hard: nproc }] : []),
    ],
    Init: true,
    AutoRemove: false,
    // Output reaches us through the attach stream; a log driver would only copy it to the host's disk.
    LogConfig: { Type: "none", Config: {} },
  };
}

/** The container's environment, and the program's: the basics, then the request's own variables. */
export function buildEnv(extra: Record<string, string> | undefined): string[] {
  const env: Record<string, string> = {
    HOME: SANDBOX_WORKDIR,
    LANG: "C.UTF-8",
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONUNBUFFERED: "1",
    // BLAS/OpenMP size their thread pools by the host's CPU count, which the CPU quota does not change;
    // every thread counts against PidsLimit.
    OMP_NUM_THREADS: "1",
    OPENBLAS_NUM_THREADS: "1",
    MKL_NUM_THREADS: "1",
    ...extra,
  };
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

/** The image a run used, as RunResult reports it. */
export interface ImageRef {
  id: string;
  digest: string | null;
}

/**
 * One sandbox's containers: all from one image, with its limits and its owner's labels. Removals are tracked
 * so that the owner can wait for the ones still under way (settled).
 */
export interface Containers {
  readonly docker: Docker;
  readonly image: string;
  readonly limits: Readonly<SandboxLimits>;
  /** The engine runtime the containers run under (HostConfig.Runtime: "runc", "runsc", ...). */
  readonly ociRuntime: string;
  /** A created, not yet started container; `deadline` (epoch ms) goes on DEADLINE_LABEL. */
  create(c: { name: string; entrypoint: string[]; env: Record<string, string> | undefined; purpose: string; deadline: number }): Promise<Docker.Container>;
  /** Force-removes the container; one already gone is not an error, other failures are logged. */
  remove(container: Docker.Container): Promise<void>;
  /** Tracks a removal that the caller does not wait for. */
  removeLater(p: Promise<void>): void;
  /** Resolves once every tracked removal has finished. */
  settled(): Promise<void>;
  /** The image's id and digest, asked of the engine once (and again after a failure). */
  imageRef(): Promise<ImageRef>;
}

export function createContainers(opts: {
  docker: Docker;
  image: string;
  runnerId: string;
  namespace?: string;
  limits: Readonly<SandboxLimits>;
  ociRuntime: string;
  log?: SandboxLog;
}): Containers {
  const { docker, image, runnerId, limits, ociRuntime, log } = opts;
  let imageRef: Promise<ImageRef> | undefined;
  const removing = new Set<Promise<void>>();

  const labels = (purpose: string, deadline: number): Record<string, string> => ({
    [SANDBOX_LABEL]: "1",
    [RUNNER_LABEL]: runnerId,
    [DEADLINE_LABEL]: String(deadline),
    [PURPOSE_LABEL]: purpose,
    ...(opts.namespace !== undefined ? { [NAMESPACE_LABEL]: opts.namespace } : {}),
  });
  const stdio = { AttachStdin: true, AttachStdout: true, AttachStderr: true, OpenStdin: true, StdinOnce: true, Tty: false } as const;

  const remove = (container: Docker.Container) =>
    container.remove({ force: true }).catch((e: unknown) => {
      if (!isGone(e)) log?.warn({ container: container.id, err: e }, "could not remove sandbox container");
    });

  return {
    docker,
    image,
    limits,
    ociRuntime,
    create: (c) =>
      docker.createContainer({
        name: c.name,
        Image: image,
        Entrypoint: c.entrypoint,
        // The bootstrap starts as root (see BOOTSTRAP_CAPS) and runs the program as SANDBOX_UID: PID 1 and the
        // bootstrap stay out of the program's reach (issue 25: docker-init ran as the program's uid).
        User: "0:0",
        WorkingDir: SANDBOX_WORKDIR,
        Env: buildEnv(c.env),
        Labels: labels(c.purpose, c.deadline),
        ...stdio,
        NetworkDisabled: true,
        HostConfig: hostConfig(limits, ociRuntime),
      }),
    remove,
    removeLater(p) {
      removing.add(p);
      void p.finally(() => removing.delete(p));
    },
    async settled() {
      while (removing.size > 0) await Promise.allSettled([...removing]);
    },
    imageRef() {
      imageRef ??= docker
        .getImage(image)
        .inspect()
        .then((i) => ({ id: i.Id, digest: i.RepoDigests?.[0] ?? null }))
        .catch((e: unknown) => {
          imageRef = undefined;
          throw e;
        });
      return imageRef;
    },
  };
}

/**
 * Whether the engine logged a kill of the container since `sinceMs`. Only the engine's stop/kill/remove
 * paths log one, and this sandbox kills only on timeout or abort (checked before): a program cannot
 * produce it, whatever it does inside. Any failure to ask is a failure of the engine, so it throws.
 */
export async function killedFromOutside(docker: Docker, id: string, sinceMs: number): Promise<boolean> {
  return eventSeen(docker, id, sinceMs, "kill");
}

/**
 * Whether the engine logged an out-of-memory kill of the container since `sinceMs`. The engine flags
 * State.OOMKilled from the exit event; an OOM event that reaches it after the exit (seen under gVisor on a
 * loaded machine) is logged but not flagged. Asked again for a short while: that event may be on its way.
 */
export async function oomLogged(docker: Docker, id: string, sinceMs: number, tries = 3, everyMs = 250): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, everyMs));
    if (await eventSeen(docker, id, sinceMs, "oom").catch(() => false)) return true;
  }
  return false;
}

/** Whether the engine's event log has `action` for the container since `sinceMs` (a second's slack). */
async function eventSeen(docker: Docker, id: string, sinceMs: number, action: string): Promise<boolean> {
  // Fractional bounds: a whole-second `until` in the future keeps the stream open until then.
  const stream = await docker.getEvents({
    since: Number(((sinceMs - 1000) / 1000).toFixed(3)),
    until: Number((Date.now() / 1000).toFixed(3)),
    filters: { type: ["container"], container: [id], event: [action] },
  });
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks)
    .toString("utf8")
    .split("\n")
    .some((line) => {
      if (!line.trim()) return false;
      try {
        return (JSON.parse(line) as { Action?: string }).Action === action;
      } catch {
        return false;
      }
    });
}

export function isGone(e: unknown): boolean {
  const status = (e as { statusCode?: number } | null)?.statusCode;
  return status === 404 || status === 409;
}
