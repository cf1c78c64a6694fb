// CPU time of processes on this machine, from /proc (Linux): what a benchmark's phase cost each party.
import { readdirSync, readFileSync } from "node:fs";

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of one process, in ms (NaN when it has gone); `system` for stime alone (time in the kernel). */
export function cpuMsOf(pid: number, which: "all" | "system" = "all"): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((which === "all" ? Number(fields[11]) : 0) + Number(fields[12])) * TICK_MS;
  } catch {
    return NaN;
  }
}

/** Pids whose command name (/proc/PID/comm) matches. */
export function pidsNamed(re: RegExp): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (re.test(readFileSync(`/proc/${d}/comm`, "utf8").trim())) out.push(Number(d));
    } catch {
      // gone between readdir and read
    }
  }
  return out;
}

/** Machine-wide busy and total CPU time (all cores), in ms, from /proc/stat. */
export function machineCpuMs(): { busy: number; total: number } {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0) * TICK_MS;
  const idle = (cpu[3]! + cpu[4]!) * TICK_MS;
  return { busy: total - idle, total };
}

/**
 * A snapshot of named parties' CPU (a party is a set of pids, re-listed at each snapshot so that new
 * backends count) and the machine's; `since(earlier)` gives what each spent in between. A process that
 * started after the first snapshot counts from zero; one that ended is lost (a backend's last ticks).
 */
export function cpuSnapshot(parties: Record<string, () => number[]>): { parties: Map<string, Map<number, number>>; machine: { busy: number; total: number } } {
  const out = new Map<string, Map<number, number>>();
  for (const [name, pids] of Object.entries(parties)) out.set(name, new Map(pids().map((p) => [p, cpuMsOf(p)])));
  return { parties: out, machine: machineCpuMs() };
}

export function cpuSince(
  before: ReturnType<typeof cpuSnapshot>,
  after: ReturnType<typeof cpuSnapshot>,
): { parties: Record<string, number>; machineBusy: number; machineTotal: number } {
  const parties: Record<string, number> = {};
  for (const [name, now] of after.parties) {
    const then = before.parties.get(name) ?? new Map<number, number>();
    let sum = 0;
    for (const [pid, ms] of now) if (Number.isFinite(ms)) sum += ms - (then.get(pid) ?? 0);
    parties[name] = sum;
  }
  return { parties, machineBusy: after.machine.busy - before.machine.busy, machineTotal: after.machine.total - before.machine.total };
}

/**
 * CPU time, in ms, of every process ever run in the Docker engine's containers (cgroup v1's cpuacct of the
 * cgroupfs driver's docker group, which keeps the time of containers already removed); NaN where that
 * file is not there (cgroup v2, the systemd driver).
 */
export function containersCpuMs(): number {
  try {
    return Number(readFileSync("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage", "utf8").trim()) / 1e6;
  } catch {
    return NaN;
  }
}
