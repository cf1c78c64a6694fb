// One run in a started container: send the request, enforce the timeout and the caller's abort, wait for the
// output, and turn what came back into a RunResult (classifying a run cut short from outside as an outage).
import type Docker from "dockerode";
import { killedFromOutside, oomLogged, relaysOutput, type ImageRef } from "./container";
import { STREAM_DRAIN_MS, captureOutput, parseTrailer, requestHeader, trailerExitCode, type Io } from "./io";
import { Sanitiser } from "./storable";
import { SandboxInterrupted, type Artifact, type JudgeResult, type RunRequest, type RunResult, type SandboxLimits, type SandboxLog } from "./types";

/**
 * Runs `req` in `c`, whose bootstrap is waiting for it. `input` is the request's files as a tar
 * (packInputs); `pooled`: `c` came from the pool; `inProcess`: its pre-imported interpreter runs the program.
 * Undefined when a pool container died before it read the request: the program never ran, so the caller
 * runs it elsewhere.
 */
export async function execute(
  deps: { docker: Docker; limits: Readonly<SandboxLimits>; ociRuntime: string; log?: SandboxLog },
  c: { container: Docker.Container; io: Io; exited: Promise<{ StatusCode: number }> },
  req: RunRequest,
  run: { input: Buffer; img: ImageRef; pooled: boolean; inProcess: boolean },
): Promise<RunResult | undefined> {
  const { docker, limits, log } = deps;
  const { container, io } = c;
  const { input, img, pooled, inProcess } = run;
  const output = captureOutput(io, limits);
  const { stdout, stderr, trailer } = output;

  const startedWallMs = Date.now();
  const started = performance.now();
  let timedOut = false;
  // There is no API to kill one process; the container is the unit we can kill.
  const timer = setTimeout(() => {
    timedOut = true;
    container.kill({ signal: "SIGKILL" }).catch(() => undefined);
  }, req.timeoutMs);
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    container.kill({ signal: "SIGKILL" }).catch(() => undefined);
  };
  if (req.signal?.aborted) onAbort();
  else req.signal?.addEventListener("abort", onAbort, { once: true });
  io.stream.end(Buffer.concat([Buffer.from(requestHeader(req, output.marker, { inProcess, relayOutput: relaysOutput(deps.ociRuntime) }, limits, input.length) + "\n"), input]));

  // A pool container's run is over once all of its output is in (both end markers): its container
  // stops and is removed after the result is returned. A cold run waits for its container, as it always did.
  let waited: { StatusCode: number } | undefined;
  try {
    waited = await (pooled ? Promise.race([c.exited, output.complete.then(() => undefined)]) : c.exited);
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener("abort", onAbort);
  }
  const durationMs = Math.round(performance.now() - started);
  const drainedInTime =
    waited === undefined ||
    (await Promise.race([io.drained.then(() => true), new Promise<boolean>((r) => setTimeout(r, STREAM_DRAIN_MS, false).unref())]));
  io.stream.destroy();
  output.end();
  // A pool container that died before it read the request never ran the program: the caller runs it elsewhere.
  if (pooled && !io.acked() && !timedOut && !aborted) return undefined;
  // Killed by SIGKILL: the out-of-memory flag is only certain once the container has stopped (and a
  // trailer without an exit code leaves the container's own).
  if (waited === undefined && (trailerExitCode(trailer) ?? 137) === 137) waited = await c.exited;
  const state = (await container.inspect()).State;
  // Killed by SIGKILL, not by us, and not flagged: the engine may have had the OOM event after the exit.
  const oomKilled = state.OOMKilled === true || (!timedOut && !aborted && waited?.StatusCode === 137 && (await oomLogged(docker, container.id, startedWallMs)));

  const artifactErrors: string[] = [];
  let exitCode = waited?.StatusCode ?? -1;
  let artifacts: Artifact[] = [];
  let judge: JudgeResult | undefined;
  let channel: RunResult["channel"];
  let protectedReplaced: string[] | undefined;
  if (timedOut) {
    exitCode = 124;
    artifactErrors.push(`timed out after ${req.timeoutMs} ms: no artifacts collected`);
  } else if (!output.trailerSeen()) {
    // The run ended before the bootstrap's trailer. If the engine (stopping or restarting), an operator
    // or a sweep stopped or killed the container, that is an outage, not what the program did: fail
    // the run (the step is retried) rather than hand the inspector a crash the program never had.
    if (!aborted && (await killedFromOutside(docker, container.id, startedWallMs))) {
      throw new SandboxInterrupted(`the sandbox container was stopped from outside during the run (container exit ${waited?.StatusCode})`);
    }
    artifactErrors.push(
      oomKilled
        ? "out of memory: the container was killed before artifacts were collected"
        : `no artifacts collected: the sandbox bootstrap did not finish (container exit ${waited?.StatusCode}${drainedInTime ? "" : ", output stream did not drain"})`,
    );
  } else {
    const parsed = await parseTrailer(trailer, limits);
    if (parsed.exitCode !== undefined) exitCode = parsed.exitCode;
    artifacts = parsed.artifacts;
    artifactErrors.push(...parsed.errors);
    judge = parsed.judge;
    channel = parsed.channel;
    protectedReplaced = parsed.protectedReplaced;
  }

  // The program's bytes become strings here; nothing unstorable leaves this function.
  const clean = new Sanitiser();
  const out = stdout.decoded();
  const err = stderr.decoded();
  clean.invalidUtf8("stdout", out.invalidUtf8);
  clean.invalidUtf8("stderr", err.invalidUtf8);
  artifacts = artifacts.map((a) => ({ ...a, name: clean.clean((n) => `artifact ${JSON.stringify(n)}: its name had`, a.name) }));
  const result: RunResult = {
    exitCode,
    timedOut,
    stdout: clean.clean("stdout", out.text),
    stderr: clean.clean("stderr", err.text),
    stdoutTruncatedBytes: stdout.clippedBytes,
    stderrTruncatedBytes: stderr.clippedBytes,
    durationMs,
    artifacts,
    artifactErrors: artifactErrors.map((m) => clean.clean("an artifact error message", m)),
    imageId: img.id,
    imageDigest: img.digest,
    ociRuntime: deps.ociRuntime,
    limits,
    oomKilled,
    aborted,
    pooled,
    ...(judge ? { judge: { ...judge, errors: judge.errors.map((m) => clean.clean("a judge error message", m)) } } : {}),
    ...(channel ? { channel: { text: clean.clean("the channel", channel.text), clipped: channel.clipped } } : {}),
    ...(protectedReplaced ? { protectedReplaced: protectedReplaced.map((p) => clean.clean("a replaced path", p)) } : {}),
    notes: clean.notes,
  };
  log?.info(
    { container: container.id.slice(0, 12), pooled, inProcess, exitCode, timedOut, durationMs, artifacts: artifacts.length, oomKilled: result.oomKilled },
    "sandbox run finished",
  );
  return result;
}
