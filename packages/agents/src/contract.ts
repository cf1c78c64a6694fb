// What every generated program may rely on inside the sandbox. The runner sets exactly these variables;
// the generator and refiner are told about them. One definition so that the two never drift apart.
import { RESULT_FILE } from "@loopsmith/schemas";

export { RESULT_FILE };

const ENVIRONMENT = `The program runs as: python3 <filename>, in a fresh container with Python 3.11, pandas 1.5 and numpy 1.24,
no network, a read-only file system except the output directory and /tmp, and a wall-clock limit.
Environment variables (the only ones set for you):
- INPUT_PATH: absolute path of the first input file.
- INPUT_PATHS: a JSON array with the absolute paths of every input file.
- INPUT_DIR: the directory holding the input files.
- OUTPUT_DIR: the only writable directory whose files are collected.`;

/**
 * The program's contract for a goal's deliverable: the file it must write, or, when the program itself is
 * the deliverable, how the checks will import it.
 */
export function scriptContract(deliverable: string | null = RESULT_FILE): string {
  const answer =
    deliverable === null
      ? `The program itself is the deliverable: checks import it as a module (under the module name their params
give, e.g. solution) and call its functions, or run it with test input on stdin. Define the functions at
module level; put any demonstration under if __name__ == "__main__": so that importing it does nothing else.`
      : `The program must write its deliverable to os.path.join(os.environ["OUTPUT_DIR"], "${deliverable}")${deliverable.endsWith(".json") ? " as JSON" : ""}.`;
  return `${ENVIRONMENT}
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

/** Keep prompts bounded: long outputs are cut in the middle, where the least is lost. */
export function clip(text: string, max = 4000): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[... ${text.length - max} characters cut ...]\n${text.slice(-half)}`;
}
