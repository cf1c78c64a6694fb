// Loaded into a process under measurement with `node --import ./bench/lib/heap-sampler.mjs` (HEAP_SAMPLE_DIR
// set): the first SIGUSR2 starts V8's sampling heap profiler, counting objects that were collected as well
// as those still alive (so it shows what a phase allocates, garbage included), the second writes
// <HEAP_SAMPLE_DIR>/<pid>.heapprofile (open it in Chrome DevTools' Memory tab, or sum its nodes' selfSize).
import { renameSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import path from "node:path";

const dir = process.env.HEAP_SAMPLE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  let sampling = false;
  process.on("SIGUSR2", () => {
    const step = sampling
      ? post("HeapProfiler.stopSampling").then(({ profile }) => {
          // Whole or not at all for whoever waits for the file.
          const file = path.join(dir, `${process.pid}.heapprofile`);
          writeFileSync(`${file}.tmp`, JSON.stringify(profile));
          renameSync(`${file}.tmp`, file);
        })
      : post("HeapProfiler.enable").then(() =>
          post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }),
        );
    sampling = !sampling;
    step.catch((err) => console.error("heap sampler:", err));
  });
}
