// What a goal's steps read again and again and nobody ever changes: its inputs, its checker files and its
// workspace (stored with the goal at submission) and its frozen plan (stored by the move out of PLAN, and
// never rewritten: a plan row exists once per goal). Every step of a demo goal read all four, each a
// statement through Prisma; a runner that takes the next step of the same goal now reads them once.
//
// Kept per goal, least recently used first out, within a byte budget; a goal's entry is dropped when the
// goal leaves the working states (step.ts). Another runner reads the same rows from the database, so
// nothing here is state: losing the cache (a restart) costs a read, never a result.
import type { PrismaClient } from "@loopsmith/db";
import type { SandboxFile } from "@loopsmith/sandbox";
import { summarizeInput, type InputSummary } from "@loopsmith/agents";
import { loadCheckerFiles } from "./check-runs";
import { loadInputs, loadPlan, loadWorkspace, type FrozenPlan, type GoalWorkspace } from "./evidence";

/** What it returns is frozen (see readOnly): the same objects go to every later step of the goal. */
export interface GoalMaterial {
  inputs(goalId: string): Promise<SandboxFile[]>;
  /** Hidden material: for the checks only (never the program's container, never a model request). */
  checkerFiles(goalId: string): Promise<SandboxFile[]>;
  workspace(goalId: string): Promise<GoalWorkspace | null>;
  plan(goalId: string): Promise<FrozenPlan>;
  /** Drops what is kept for the goal (it ended, or waits for its client). */
  forget(goalId: string): void;
  /** Bytes kept now, and how many goals they belong to. */
  stats(): { bytes: number; goals: number };
}

type Kind = "inputs" | "checkerFiles" | "workspace" | "plan";
interface Entry {
  loads: Partial<Record<Kind, Promise<unknown>>>;
  bytes: number;
}

/** What a loaded value holds, roughly: its bytes and strings. */
function sizeOf(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (typeof value === "string") return value.length;
  if (typeof value !== "object") return 8;
  let n = 0;
  for (const v of Object.values(value)) n += sizeOf(v);
  return n;
}

/**
 * Every later step of the goal gets the same object: a step that changed it would change what the next one
 * reads, so it is frozen (objects and arrays; a file's bytes cannot be, and nothing writes them).
 */
function readOnly(value: unknown): void {
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value) || Object.isFrozen(value)) return;
  for (const v of Object.values(value)) readOnly(v);
  Object.freeze(value);
}

/**
 * `maxBytes`: what all goals' entries may hold together (0 keeps nothing: every call reads the database).
 * A goal whose material alone is larger is read every time, as before.
 */
export function createGoalMaterial(prisma: PrismaClient, maxBytes: number): GoalMaterial {
  const entries = new Map<string, Entry>();
  let total = 0;
  const drop = (goalId: string) => {
    const e = entries.get(goalId);
    if (!e) return;
    entries.delete(goalId);
    total -= e.bytes;
  };
  /** Drops one value of a goal's entry, and the entry once it keeps nothing. */
  const unkeep = (goalId: string, entry: Entry, kind: Kind) => {
    delete entry.loads[kind];
    if (Object.keys(entry.loads).length === 0 && entries.get(goalId) === entry) drop(goalId);
  };
  const get = <T>(kind: Kind, goalId: string, load: () => Promise<T>): Promise<T> => {
    if (maxBytes <= 0) return load();
    let e = entries.get(goalId);
    if (e) {
      // Most recently used last: a Map iterates in insertion order, so the first key is the one to evict.
      entries.delete(goalId);
      entries.set(goalId, e);
    } else {
      e = { loads: {}, bytes: 0 };
      entries.set(goalId, e);
    }
    const kept = e.loads[kind] as Promise<T> | undefined;
    if (kept) return kept;
    const entry = e;
    const loading = load().then(
      (value) => {
        readOnly(value);
        const size = sizeOf(value);
        if (entries.get(goalId) !== entry) return value; // forgotten (or evicted) meanwhile
        if (size > maxBytes) {
          unkeep(goalId, entry, kind);
          return value;
        }
        entry.bytes += size;
        total += size;
        for (const [id] of entries) {
          if (total <= maxBytes) break;
          if (id !== goalId) drop(id);
        }
        if (total > maxBytes) drop(goalId);
        return value;
      },
      (err: unknown) => {
        // A failed read (the plan not written yet, the database away) is not kept: the next step reads again.
        if (entry.loads[kind] === loading) unkeep(goalId, entry, kind);
        throw err;
      },
    );
    entry.loads[kind] = loading;
    return loading;
  };
  return {
    inputs: (goalId) => get("inputs", goalId, () => loadInputs(prisma, goalId)),
    checkerFiles: (goalId) => get("checkerFiles", goalId, () => loadCheckerFiles(prisma, goalId)),
    workspace: (goalId) => get("workspace", goalId, () => loadWorkspace(prisma, goalId)),
    plan: (goalId) => get("plan", goalId, () => loadPlan(prisma, goalId)),
    forget: drop,
    stats: () => ({ bytes: total, goals: entries.size }),
  };
}

/** What the planner and generator are shown of the goal's inputs. */
export async function inputSummaries(deps: { material: GoalMaterial }, goalId: string): Promise<InputSummary[]> {
  return (await deps.material.inputs(goalId)).map((f) => summarizeInput(f.name, f.content));
}
