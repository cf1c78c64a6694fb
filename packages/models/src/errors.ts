import { LoopSmithError } from "@loopsmith/core";
import { APICallError, EmptyResponseBodyError, InvalidResponseDataError, JSONParseError, RetryError, TypeValidationError } from "ai";
import type { ModelUsage, RejectedReply } from "./types";

/** Every try's reply failed the schema. Carries what was billed and each rejected reply, for the tape. */
export class ModelOutputError extends LoopSmithError {
  readonly tries: number;
  readonly rejected: RejectedReply[];
  readonly usage: ModelUsage;
  readonly latencyMs: number;

  constructor(message: string, info: { tries: number; rejected: RejectedReply[]; usage: ModelUsage; latencyMs: number }) {
    super("LS_ERR_MODEL_OUTPUT", message, { tries: info.tries, rejected: info.rejected });
    this.name = "ModelOutputError";
    this.tries = info.tries;
    this.rejected = info.rejected;
    this.usage = info.usage;
    this.latencyMs = info.latencyMs;
  }
}

/** The provider could not be reached or refused the call (HTTP error, network error, timeout). */
export class ModelUnavailableError extends LoopSmithError {
  readonly statusCode: number | undefined;
  readonly providerMessage: string;
  /** Usage of earlier, schema-rejected tries of the same request: they were billed even though this one failed. */
  readonly usage: ModelUsage;
  readonly latencyMs: number;

  constructor(
    message: string,
    info: { statusCode?: number; providerMessage: string; usage: ModelUsage; latencyMs: number; cause?: unknown },
  ) {
    super("LS_ERR_MODEL_UNAVAILABLE", message, { statusCode: info.statusCode ?? null, providerMessage: info.providerMessage });
    this.name = "ModelUnavailableError";
    this.statusCode = info.statusCode;
    this.providerMessage = info.providerMessage;
    this.usage = info.usage;
    this.latencyMs = info.latencyMs;
    if (info.cause !== undefined) this.cause = info.cause;
  }

  /**
   * The provider refused the request itself (bad key, unknown model, a schema it rejects): asking again
   * cannot help. 408, 409 and 429 are about timing, so they stay retryable.
   */
  get permanent(): boolean {
    const s = this.statusCode;
    return s !== undefined && s >= 400 && s < 500 && s !== 408 && s !== 409 && s !== 429;
  }
}

/**
 * The status and message of a failed provider call, or undefined when `e` is not a transport failure
 * (then it is a bug and should surface as is). RetryError wraps the SDK's own retries; its last error says most.
 */
export function describeTransportError(e: unknown): { statusCode?: number; message: string } | undefined {
  if (RetryError.isInstance(e)) {
    const last = describeTransportError(e.lastError);
    const message = last ? `failed after ${e.errors.length} attempts; last error: ${last.message}` : e.message;
    return { statusCode: last?.statusCode, message };
  }
  if (APICallError.isInstance(e)) {
    // The SDK takes the message from the provider's error body; a body in another shape leaves it empty.
    const message = e.message || `HTTP ${e.statusCode ?? "error"}: ${(e.responseBody ?? "").slice(0, 500)}`;
    return { statusCode: e.statusCode, message };
  }
  // A 200 that is not a usable completion: the server misbehaved, which is no fault of the reply's content.
  if (InvalidResponseDataError.isInstance(e) || EmptyResponseBodyError.isInstance(e)) return { message: e.message };
  // fetch rejects with these when the abort signal (our timeout) fires; the SDK passes them through unwrapped.
  if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) {
    return { message: `the request was aborted (${e.name}): ${e.message}` };
  }
  return undefined;
}

const MAX_ISSUES = 10;

/** A short, model-readable account of why a reply was rejected: the zod issues, or the JSON parse error. */
export function summarizeOutputError(cause: unknown): string {
  if (TypeValidationError.isInstance(cause)) return summarizeOutputError(cause.cause);
  if (JSONParseError.isInstance(cause)) {
    const inner = cause.cause instanceof Error ? cause.cause.message : String(cause.cause);
    return `the reply is not valid JSON (${inner})`;
  }
  const issues = (cause as { issues?: unknown } | null)?.issues;
  if (Array.isArray(issues)) return summarizeIssues(issues as { path: PropertyKey[]; message: string }[]);
  return cause instanceof Error ? cause.message : String(cause);
}

export function summarizeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const shown = issues.slice(0, MAX_ISSUES).map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`);
  if (issues.length > MAX_ISSUES) shown.push(`and ${issues.length - MAX_ISSUES} more`);
  return shown.join("; ");
}
