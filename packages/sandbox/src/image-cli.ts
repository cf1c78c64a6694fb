// Usage (from the repo root):
//   tsx packages/sandbox/src/image-cli.ts ensure   build the sandbox image unless it exists
//                                                  (LOOPSMITH_SANDBOX_BUILD=auto|offline|dockerfile)
//   tsx packages/sandbox/src/image-cli.ts tag      print the image tag for this checkout
import Docker from "dockerode";
import { ensureSandboxImage, sandboxImageTag, type BuildMode } from "./image";
import { pingDocker, type SandboxLog } from "./sandbox";

// Progress goes to stderr so that stdout carries only the answer.
const log: SandboxLog = {
  info: (_obj, msg) => console.error(msg ?? ""),
  warn: (obj, msg) => console.error(`warning: ${msg ?? ""} ${JSON.stringify(obj)}`),
};

const MODES: BuildMode[] = ["auto", "offline", "dockerfile"];

async function main(cmd: string | undefined): Promise<number> {
  if (cmd === "tag") {
    console.log(sandboxImageTag());
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
    const res = await ensureSandboxImage({ docker, mode, log });
    console.log(
      res.built
        ? `${res.tag} built (${res.mode}) in ${res.seconds}s, image ${res.imageId}`
        : `${res.tag} present, build skipped (${res.seconds}s)`,
    );
    return 0;
  }
  console.error("usage: image-cli.ts ensure|tag");
  return 2;
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`sandbox image: ${(e as Error).message}`);
    process.exit(1);
  },
);
