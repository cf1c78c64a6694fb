// What every generated program may rely on inside the sandbox. The runner sets exactly these variables;
// the generator and refiner are told about them. One definition so that the two never drift apart.
import { RESULT_FILE, type Language } from "@loopsmith/schemas";

export { RESULT_FILE };

const ENVIRONMENT = `The program runs as: python3 <filename>, in a fresh container with Python 3.11, pandas 1.5 and numpy 1.24,
no network, a read-only file system except the output directory and /tmp, and a wall-clock limit.
Environment variables (the only ones set for you):
- INPUT_PATH: absolute path of the first input file.
- INPUT_PATHS: a JSON array with the absolute paths of every input file.
- INPUT_DIR: the directory holding the input files.
- OUTPUT_DIR: the only writable directory whose files are collected.`;

/** issue 14: how a JavaScript or TypeScript program runs; the variables, output directory and exit codes are Python's. */
const NODE_RUNS_AS: Record<Exclude<Language, "python">, string> = {
  javascript:
    'node <filename>, in a fresh container with Node 20 (ES modules for .mjs or under a package.json with "type": "module", else CommonJS), npm and tsc. No npm packages beyond Node\'s built-ins and what the workspace\'s node_modules holds',
  typescript:
    "node --import <TypeScript loader> <filename>, in a fresh container with Node 20 and TypeScript 5.9: types are stripped, not checked, when it runs (a tsc check type-checks); write ES module syntax. No npm packages beyond Node's built-ins and what the workspace's node_modules holds",
};

function environmentFor(language: Language): string {
  if (language === "python") return ENVIRONMENT;
  const rest = ENVIRONMENT.slice(ENVIRONMENT.indexOf("\n") + 1).replace("except the output directory", "except the working directory, the output directory");
  return `The program runs as: ${NODE_RUNS_AS[language]},\n${rest}`;
}

const WORKSPACE_CONTRACT = `The working directory holds the goal's workspace (listed below). Your deliverable is your change to it:
filename/source is the workspace file you fix, or its entry point (its path in the workspace; it is run as
above and must exit 0); files lists every other file you change or add, each with its FULL new content
(never a diff), paths relative to the workspace root. Each attempt is applied to the ORIGINAL workspace,
so repeat every change you still want. Locked files must stay as they are: an attempt that changes one is
not accepted. LoopSmith computes the patch; you do not write it.`;

/**
 * The program's contract for a goal's deliverable: the file it must write, or, when the program itself is
 * the deliverable, how the checks will import it.
 */
export function scriptContract(deliverable: string | null = RESULT_FILE, language: Language = "python", workspace = false): string {
  if (workspace) return `${environmentFor(language)}\n${WORKSPACE_CONTRACT}`;
  const outPath = (f: string) => (language === "python" ? `os.path.join(os.environ["OUTPUT_DIR"], "${f}")` : `path.join(process.env.OUTPUT_DIR, "${f}")`);
  const answer =
    deliverable === null
      ? `The program itself is the deliverable: checks import it as a module (under the module name their params
give, e.g. solution) and call its functions, or run it with test input on stdin. Define the functions at
module level; put any demonstration under if __name__ == "__main__": so that importing it does nothing else.`
      : `The program must write its deliverable to ${outPath(deliverable)}${deliverable.endsWith(".json") ? " as JSON" : ""}.`;
  return `${environmentFor(language)}
${answer}
Exit with status 0 on success, and let real errors raise (a non-zero exit is reported back with stderr).`;
}

/** The contract of the default deliverable (result.json). */
export const SCRIPT_CONTRACT = scriptContract(RESULT_FILE);

export interface InputSummary {
  name: string;
  size: number;
  /** The first lines of a text input, so the model sees the real header and quirks. */
  head: string | null;
}

const HEAD_BYTES = 2048;
const HEAD_LINES = 25;

/** A short, safe preview of an input for prompts: the first lines of text, nothing of binary files. */
export function summarizeInput(name: string, content: Buffer): InputSummary {
  const slice = content.subarray(0, HEAD_BYTES);
  const text = slice.toString("utf8");
  const binary = /[\x00-\x08\x0e-\x1f]/.test(text);
  return { name, size: content.length, head: binary ? null : text.split("\n").slice(0, HEAD_LINES).join("\n") };
}

export function describeInputs(inputs: InputSummary[]): string {
  if (inputs.length === 0) return "No input files.";
  return inputs
    .map((i) =>
      i.head === null
        ? `- ${i.name} (${i.size} bytes, binary)`
        : `- ${i.name} (${i.size} bytes). First lines:\n\`\`\`\n${i.head}\n\`\`\``,
    )
    .join("\n");
}

/** A workspace as a prompt shows it: every path (locked ones marked), and the text of the small files outside node_modules. */
export function describeWorkspace(files: { path: string; content: Buffer }[], locked: readonly string[], maxChars = 40_000): string {
  const isLocked = (p: string) => locked.some((l) => p === l.replace(/\/$/, "") || p.startsWith(`${l.replace(/\/$/, "")}/`));
  const listed = files.filter((f) => !f.path.startsWith("node_modules/"));
  const modules = files.length - listed.length;
  const lines = listed.map((f) => `- ${f.path} (${f.content.length} bytes)${isLocked(f.path) ? " [locked]" : ""}`);
  if (modules > 0) lines.push(`- node_modules/ (${modules} files, not shown)`);
  let budget = maxChars;
  const shown: string[] = [];
  for (const f of listed) {
    const text = f.content.toString("utf8");
    if (/[\x00-\x08\x0e-\x1f]/.test(text) || text.length > budget) continue;
    budget -= text.length;
    shown.push(`${f.path}:\n\`\`\`\n${text}\n\`\`\``);
  }
  return `${lines.join("\n")}${shown.length ? `\n\n${shown.join("\n\n")}` : ""}`;
}

/** Keep prompts bounded: long outputs are cut in the middle, where the least is lost. */
export function clip(text: string, max = 4000): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[... ${text.length - max} characters cut ...]\n${text.slice(-half)}`;
}
