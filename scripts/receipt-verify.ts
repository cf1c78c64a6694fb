// npm run receipt:verify -- RECEIPT.json --keys KEYS.json [--artifact NAME=PATH ...] [--program PATH] [--tape TAPE.json]
// Checks a LoopSmith receipt offline: no database, no network. Exit 0 and "receipt OK" when the signature,
// the key's validity when the receipt was issued, every file given and the tape all match; exit 1 naming
// each thing that did not; exit 2 on bad usage.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { readJsonDocument, verifyReceipt, type VerifyGiven } from "@loopsmith/receipts";

const HELP = `usage: npm run receipt:verify -- RECEIPT.json --keys KEYS.json [--artifact NAME=PATH ...] [--program PATH] [--tape TAPE.json]

  RECEIPT.json      GET /goals/:id/receipt (or GET /goals/:id, whose "receipt" is used)
  --keys FILE       GET /.well-known/loopsmith-receipt-keys, saved
  --artifact N=P    a file the receipt lists under name N (the deliverable, or any artifact of the verified run)
  --program PATH    the verified program
  --tape FILE       the "transitions" array of GET /goals/:id (or the whole goal)`;

function usage(message: string): never {
  console.error(`${message}\n\n${HELP}`);
  process.exit(2);
}

// Read exactly (issue 25): JSON.parse would keep the last of two duplicate keys, so a receipt holding a
// second goal_id could pass here while whoever reads the file sees the first.
function readJson(path: string, what: string): unknown {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    usage(`cannot read the ${what} ${path}: ${(e as Error).message}`);
  }
  const read = readJsonDocument(bytes);
  if (read.ok) return read.value;
  console.error(`receipt FAILED\n  ${what} ${path}: not JSON that reads one way (${read.message})`);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      keys: { type: "string" },
      artifact: { type: "string", multiple: true, default: [] },
      program: { type: "string" },
      tape: { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
} catch (e) {
  usage((e as Error).message);
}
const { values: args, positionals } = parsed;
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
if (positionals.length !== 1) usage("give exactly one receipt file");
if (!args.keys) usage("--keys is required");

const read = (path: string) => {
  try {
    return readFileSync(path);
  } catch (e) {
    usage(`cannot read ${path}: ${(e as Error).message}`);
  }
};
let receipt = readJson(positionals[0]!, "receipt");
// A saved goal view holds its receipt (and its tape): take them from there.
if (receipt && typeof receipt === "object" && "receipt" in receipt && !("format" in receipt)) receipt = (receipt as { receipt: unknown }).receipt;
const given: VerifyGiven = {
  artifacts: args.artifact.map((spec) => {
    const eq = spec.indexOf("=");
    if (eq <= 0) usage(`--artifact ${spec}: expected NAME=PATH`);
    return { name: spec.slice(0, eq), content: read(spec.slice(eq + 1)) };
  }),
};
if (args.program) given.program = read(args.program);
if (args.tape) {
  const tape = readJson(args.tape, "tape");
  given.tape = tape && typeof tape === "object" && !Array.isArray(tape) && "transitions" in tape ? (tape as { transitions: unknown }).transitions : tape;
}

const result = verifyReceipt(receipt, readJson(args.keys, "keys file"), given);
if (result.ok) {
  console.log(["receipt OK", ...result.checked.map((c) => `  ${c}`)].join("\n"));
  process.exit(0);
}
console.error(["receipt FAILED", ...result.problems.map((p) => `  ${p}`)].join("\n"));
process.exit(1);
