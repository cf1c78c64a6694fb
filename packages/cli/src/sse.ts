// A Server-Sent Events reader for GET /goals/:id/events: bytes in, {id, event, data} out (pure parsing
// over an async iterable, so it is testable without a server).

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** Splits a text/event-stream into events (comments and retry fields skipped), per the HTML spec's rules. */
export async function* readEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let ev: { id?: string; event?: string; data: string[] } = { data: [] };
  const take = function* (line: string): Generator<SseEvent> {
    if (line === "") {
      if (ev.data.length > 0) yield { ...(ev.id !== undefined ? { id: ev.id } : {}), event: ev.event ?? "message", data: ev.data.join("\n") };
      ev = { data: [] };
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") ev.data.push(value);
    else if (field === "event") ev.event = value;
    else if (field === "id") ev.id = value;
  };
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
      yield* take(line);
    }
  }
  buffer += decoder.decode();
  if (buffer) yield* take(buffer);
  yield* take("");
}
