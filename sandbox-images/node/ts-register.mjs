// node --import /opt/loopsmith/ts-register.mjs: TypeScript files run (and test) like JavaScript ones.
import { register } from "node:module";
register("./ts-hooks.mjs", import.meta.url);
