// Usage (from the repo root):
//   tsx packages/sandbox/src/image-cli.ts ensure   build the sandbox image unless it exists
//                                                  (LOOPSMITH_SANDBOX_BUILD=auto|offline|dockerfile)
//   tsx packages/sandbox/src/image-cli.ts tag      print the image tag for this checkout
//   add "node" (ensure node, tag node) for the Node image of JavaScript and TypeScript goals
import Docker from "dockerode";
import { ensureSandboxImage, nodeSandboxImageTag, sandboxImageTag, type BuildMode } from "./image";
import { pingDocker, type SandboxLog } from "./sandbox";

// Progress goes to stderr so that stdout carries only the answer.
const log: SandboxLog = {
  info: (_obj, msg) => console.error(msg ?? ""),
  warn: (obj, msg) => console.error(`warning: ${msg ?? ""} ${JSON.stringify(obj)}`),
};

const MODES: BuildMode[] = ["auto", "offline", "dockerfile"];

async function main(cmd: string | undefined, which: string | undefined): Promise<number> {
  const runtime = which === "node" ? "node" : "python";
  if (cmd === "tag") {
    console.log(runtime === "node" ? nodeSandboxImageTag() : sandboxImageTag());
    return 0;
  }
  if (cmd === "ensure") {
    const mode = (process.env.LOOPSMITH_SANDBOX_BUILD ?? "auto") as BuildMode;
    if (!MODES.includes(mode)) {
      console.error(`LOOPSMITH_SANDBOX_BUILD must be one of ${MODES.join(", ")}, got ${mode}`);
      return 2;
    }
    const docker = new Docker();
    await pingDocker(docker);
    const res = await ensureSandboxImage({ docker, mode, log, runtime });
    console.log(
      res.built
        ? `${res.tag} built (${res.mode}) in ${res.seconds}s, image ${res.imageId}`
        : `${res.tag} present, build skipped (${res.seconds}s)`,
    );
    return 0;
  }
  console.error("usage: image-cli.ts ensure|tag [python|node]");
  return 2;
}

main(process.argv[2], process.argv[3]).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`sandbox image: ${(e as Error).message}`);
    process.exit(1);
  },
);
