// Requests Node's HTTP parser refuses before Fastify sees them (headers over maxHeaderSize, headers that
// did not arrive within headersTimeout, a malformed request line or header, a NUL in a header, both
// Content-Length and Transfer-Encoding) were answered in Fastify's own shape ({"error": "Bad Request",
// "statusCode": 400}), the one answer a client could not parse as the catalogue's (issue 25). Fastify's
// clientErrorHandler gets the raw socket: the answer is written by hand, in the catalogue's shape, and
// the connection is closed (the parser cannot go on after an error, and the rest of the bytes are not a
// request anyone can trust).
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyInstance } from "fastify";
import { LoopSmithError } from "@loopsmith/core";

/** The catalogue's answer to one of Node's client errors; undefined when nothing can be answered. */
export function clientErrorAnswer(err: { code?: unknown; message?: unknown }): LoopSmithError | undefined {
  switch (err.code) {
    // The peer is gone: nobody to answer.
    case "ECONNRESET":
    case "EPIPE":
      return undefined;
    case "HPE_HEADER_OVERFLOW":
      return new LoopSmithError("LS_ERR_HEADERS_TOO_LARGE", "The request's headers are larger than this server accepts.");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new LoopSmithError("LS_ERR_HEADERS_TIMEOUT", "The request's headers did not arrive in time.");
    default: {
      // llhttp's reason ("Invalid header value char", "Content-Length can't be present with Transfer-Encoding"):
      // a fixed sentence of the parser, never the client's bytes.
      const reason = typeof err.message === "string" && /^Parse Error: [\w\s'.,-]{1,100}$/.test(err.message) ? err.message.slice("Parse Error: ".length) : undefined;
      return new LoopSmithError("LS_ERR_MALFORMED_REQUEST", reason ? `The request is not valid HTTP/1.1: ${reason}.` : undefined, typeof err.code === "string" ? { parser_code: err.code } : null);
    }
  }
}

/** The raw bytes of an answer on a connection that closes after it. */
export function rawAnswer(error: LoopSmithError): string {
  const body = JSON.stringify(error.toBody());
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}`,
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

/** Fastify's clientErrorHandler option: `this` is the Fastify instance. */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (socket.destroyed) return;
  const answer = clientErrorAnswer(err);
  this.log.debug({ err, code: err.code }, "client error");
  // Node's own rule: only on a writable socket whose current response (a pipelined one) has not begun.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (answer && socket.writable && !current?.headersSent) socket.end(rawAnswer(answer));
  socket.destroySoon();
}
