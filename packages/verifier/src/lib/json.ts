// The exact JSON reader lives in @loopsmith/core (issue 25): receipts verify with it too, and the receipts
// package cannot depend on the verifier (the verifier depends on schemas, which depends on receipts).
export { jsonDepth, MAX_JSON_DEPTH, parseJsonExact, stringifyJson, type Json, type Parsed } from "@loopsmith/core/json";
