// A Server-Sent Events reader for GET /goals/:id/events: bytes in, {id, event, data} out, parsed by
// eventsource-parser (over an async iterable, so it is testable without a server).
import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Characters a line or an event not yet ended may hold: a tape row is a few KiB, so a stream past this is
 * not the API's; it ends the stream with an error (the CLI reconnects, as after a dropped connection).
 */
export const MAX_SSE_BUFFER = 8 * 1024 * 1024;

/**
 * Splits a text/event-stream into events (comments, retry fields and unknown fields skipped). An event the
 * stream ends before its blank line is dropped, as the HTML spec says: a cut-off `end` is no end.
 */
export async function* readEvents(chunks: AsyncIterable<Uint8Array>, maxBuffer: number = MAX_SSE_BUFFER): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let ready: SseEvent[] = [];
  let failure: ParseError | undefined;
  const parser = createParser({
    onEvent: (e: EventSourceMessage) => ready.push({ ...(e.id !== undefined ? { id: e.id } : {}), event: e.event ?? "message", data: e.data }),
    onError: (e) => {
      if (e.type === "max-buffer-size-exceeded") failure = e;
    },
    maxBufferSize: maxBuffer,
  });
  const drain = function* (): Generator<SseEvent> {
    const out = ready;
    ready = [];
    yield* out;
    if (failure) throw new Error(`the event stream held more than ${maxBuffer} characters without ending a line or an event`);
  };
  for await (const chunk of chunks) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* drain();
  }
  parser.feed(decoder.decode());
  yield* drain();
}
