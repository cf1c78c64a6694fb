// @loopsmith/receipts: canonical JSON, the tape's hash chain, and signing and verifying receipts. Pure
// (node:crypto, zod and core's exact JSON reader only, no database, no network), so that the runner that
// signs and an offline verifier run the very same code.
export { canonicalJson, sha256Hex } from "./canonical";
export { chainHashes, transitionHash, type TapeRow } from "./chain";
export {
  buildReceiptPayload,
  KEY_ID,
  keyIdFor,
  RECEIPT_ALG,
  RECEIPT_FORMAT,
  receiptCheck,
  ReceiptError,
  receiptSchema,
  signedBytes,
  signReceipt,
  type Receipt,
  type ReceiptFacts,
  type ReceiptPayload,
} from "./receipt";
export { readJsonDocument, type Read } from "./read";
export { compareInstants, instant, type Instant } from "./time";
export { receiptKey, receiptKeySet, verifyReceipt, type ReceiptKey, type Verification, type VerifyGiven } from "./verify";
