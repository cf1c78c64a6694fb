// The one error catalog. Every error that can leave a process has a stable code, an HTTP status and a
// retryable flag. Codes are never reused or renamed: clients match on them.
export const ERROR_CATALOG = {
  LS_ERR_VALIDATION: { status: 400, retryable: false, message: "The request is invalid." },
  LS_ERR_PAYLOAD_TOO_LARGE: { status: 413, retryable: false, message: "The request body is too large." },
  LS_ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: false, message: "Send the request body as application/json." },
  LS_ERR_NOT_FOUND: { status: 404, retryable: false, message: "Not found." },
  LS_ERR_NOT_READY: { status: 503, retryable: true, message: "A dependency is not ready." },
  LS_ERR_CONFIG: { status: 500, retryable: false, message: "The server configuration is invalid." },
  LS_ERR_INTERNAL: { status: 500, retryable: true, message: "Internal error." },
  LS_ERR_MODEL_DISABLED: { status: 400, retryable: false, message: "That model provider is not enabled on this server." },
  LS_ERR_MODEL_OUTPUT: { status: 502, retryable: false, message: "The model's output did not match the required schema." },
  LS_ERR_MODEL_UNAVAILABLE: { status: 503, retryable: true, message: "The model provider could not be reached." },
  LS_ERR_STALE_VERSION: { status: 409, retryable: false, message: "The goal moved on since this step was scheduled." },
  LS_ERR_ILLEGAL_TRANSITION: { status: 500, retryable: false, message: "The state machine refused a transition." },
  LS_ERR_UNAUTHORIZED: { status: 401, retryable: false, message: "Send a valid API key: Authorization: Bearer <key>." },
  LS_ERR_FORBIDDEN: { status: 403, retryable: false, message: "This key may not do that." },
  LS_ERR_IDEMPOTENCY_CONFLICT: {
    status: 409,
    retryable: false,
    message: "This Idempotency-Key was already used with a different request body.",
  },
  LS_ERR_GOAL_STATE: { status: 409, retryable: false, message: "The goal is not in a state that allows this." },
  LS_ERR_RATE_LIMITED: { status: 429, retryable: true, message: "Too many requests for this tenant; retry after the given delay." },
  LS_ERR_WEBHOOK_URL: {
    status: 400,
    retryable: false,
    message: "The webhook URL is not allowed: it must be http(s) and resolve to a public address.",
  },
  LS_ERR_DELIVERY_IN_PROGRESS: { status: 409, retryable: true, message: "This delivery is still being attempted." },
  LS_ERR_SANDBOX_UNAVAILABLE: { status: 503, retryable: true, message: "The sandbox engine could not run the program." },
  LS_ERR_GOAL_LIMIT: { status: 429, retryable: true, message: "This tenant has too many goals that have not ended; submit again when some have." },
  LS_ERR_SCHEDULE_LIMIT: { status: 409, retryable: false, message: "This tenant has as many schedules as it may have; delete one first." },
  LS_ERR_STREAM_LIMIT: { status: 429, retryable: true, message: "Too many event streams are open; close one or retry later." },
  LS_ERR_BODY_TIMEOUT: { status: 408, retryable: true, message: "The request body did not arrive in time." },
  LS_ERR_BUSY: { status: 503, retryable: true, message: "The server is busy; retry after the Retry-After delay." },
  LS_ERR_MODEL_NOT_ALLOWED: { status: 400, retryable: false, message: "That model name is not on this server's allow-list." },
  LS_ERR_KEY_EXPIRED: { status: 401, retryable: false, message: "This API key has expired; ask the operator for a new one." },
  LS_ERR_KEY_INACTIVE: { status: 409, retryable: false, message: "This API key is revoked or expired; issue a new one instead." },
  LS_ERR_DATABASE: { status: 503, retryable: true, message: "The database could not complete the request." },
  LS_ERR_ARTIFACT_NOT_FOUND: { status: 404, retryable: false, message: "The goal has no such artifact, program or checker file." },
  LS_ERR_WORKSPACE_ARCHIVE: { status: 400, retryable: false, message: "The workspace archive cannot be unpacked safely." },
  // Answered by the HTTP server itself, before any route runs (issue 25): the connection closes after them.
  LS_ERR_HEADERS_TOO_LARGE: { status: 431, retryable: false, message: "The request's headers are too large." },
  LS_ERR_HEADERS_TIMEOUT: { status: 408, retryable: true, message: "The request's headers did not arrive in time." },
  LS_ERR_MALFORMED_REQUEST: { status: 400, retryable: false, message: "The request is not valid HTTP/1.1." },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export class LoopSmithError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: unknown;

  constructor(code: ErrorCode, message?: string, details?: unknown) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = "LoopSmithError";
    this.code = code;
    this.status = ERROR_CATALOG[code].status;
    this.retryable = ERROR_CATALOG[code].retryable;
    this.details = details;
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, details: this.details ?? null } };
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: unknown };
}

/** Errors crossing a process boundary (job results, logs) are matched by code, never by instanceof. */
export function errorCodeOf(e: unknown): ErrorCode | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && code in ERROR_CATALOG ? (code as ErrorCode) : undefined;
}
