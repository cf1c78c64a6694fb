export type { CheckDef, CheckResult, ParamsSchema, VerifyContext } from "./types";
export { defineAlias, defineCheck } from "./define";
export { checkRegistry, knownCheckIds, listChecks } from "./registry";
export { runChecks, validateCheckSpec, type CheckSpecValidation } from "./run";
export { dotPath, resolvePath, type Resolved } from "./json-path";
export { DEMO_RESULT_SCHEMA } from "./checks/aliases";
export { isBlankKey } from "./checks/no-blank-keys";
