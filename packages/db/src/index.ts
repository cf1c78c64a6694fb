// @loopsmith/db: the one Prisma client and the only code that writes goal state.

// Client construction and health.
export { createPrisma, DatabaseConnectionError, pingDatabase, sendStatement, type CreatePrismaOptions, type PingResult } from "./client";

// Generated client: the PrismaClient class, the Prisma namespace (errors, JsonValue, input types, ...)
// and one row type per model.
export { PrismaClient, Prisma } from "./generated/client";
export type {
  ApiKey,
  Artifact,
  CheckResult,
  CheckRun,
  DeliveryAttempt,
  Execution,
  Goal,
  GoalCheckerFile,
  GoalInput,
  ModelCall,
  Plan,
  ReceiptKey,
  Tenant,
  Transition,
  WebhookDelivery,
  WebhookSecret,
} from "./generated/client";

// Goal-state writer: compare-and-set on Goal.version + tape append + the step's evidence, in one transaction.
export { advanceGoal, asJson, createGoal, tapeHash, type Advance, type NewGoal, type OpenGoalCap, type Tx } from "./goal-state";
export { artifactRow, checkResultRow, checkRunRow, executionRow, planRow, type ExecutionData, type RowInsert } from "./rows";
export { readSnapshot } from "./tx";
export { readStepGoal, type StepGoal } from "./step-goal";

// Tenants, API keys, webhook secrets.
export {
  activeWebhookSecrets,
  authenticate,
  checkApiKey,
  createApiKey,
  createTenant,
  hashApiKey,
  MAX_VALID_WEBHOOK_SECRETS,
  newWebhookSecret,
  rotateWebhookSecret,
  sealWebhookSecrets,
  type AuthenticatedTenant,
  type CreatedTenant,
} from "./tenants";
// The credential lifecycle: API keys issued, listed, revoked, rotated; webhook secrets listed and expired.
export {
  expireWebhookSecret,
  issueApiKey,
  keyStatus,
  listApiKeys,
  listWebhookSecrets,
  revokeApiKey,
  rotateApiKey,
  type ApiKeyInfo,
  type IssuedApiKey,
  type KeyStatus,
  type WebhookSecretInfo,
} from "./key-lifecycle";
// Webhook signing secrets at rest (AES-256-GCM).
export { createSecretBox, isSealed, SECRET_KEY_BYTES, secretKeyId, type SecretBox } from "./secret-box";

// Reads through the tenant: the goal view (GET /goals/:id and webhook payloads) and the failure report.
export { buildFailureReport, giveUpOf, loadGoalView, resultMatchesParams, transitionRow, UUID } from "./goal-view";

// Export and the judge report: a goal's full record, a window of a tenant's tapes.
export { loadGoalRecord, loadJudgeInputs } from "./goal-records";

// A tenant's goals: the scoped reads and writes the API makes on a client's behalf.
export { goalsOf, type GoalPage, type TenantGoals } from "./tenant-goals";

// What a tenant holds right now (per-tenant caps: the runner's active goals, the API's open goals).
export { workingGoalsAhead } from "./tenant-load";

// Counts for monitoring.
export { goalCounts } from "./goal-counts";
