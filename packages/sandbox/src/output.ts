// Host-side handling of the container's output streams: Docker's multiplexed frames, the trailer marker
// that separates the program's stdout from the artifact tar, and bounded capture of both.

/** Splits Docker's attach stream (8-byte header: stream type, 3 zero bytes, big-endian length) into frames. */
export function createDemuxer(onFrame: (stream: number, payload: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      onFrame(pending[0]!, pending.subarray(8, 8 + size));
      pending = pending.subarray(8 + size);
    }
  };
}

/**
 * Keeps the first and last half of `cap` bytes of an unbounded stream, so that both the start of a log and
 * the final traceback survive a program that prints megabytes.
 */
export class ClippedCapture {
  private head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(cap: number) {
    this.headCap = Math.ceil(cap / 2);
    this.tailCap = Math.floor(cap / 2);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.headCap) {
      const take = chunk.subarray(0, this.headCap - this.headLen);
      this.head.push(Buffer.from(take));
      this.headLen += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0 || this.tailCap === 0) return;
    // Copy, so that a retained slice never pins a large chunk in memory.
    this.tail =
      chunk.length >= this.tailCap
        ? Buffer.from(chunk.subarray(chunk.length - this.tailCap))
        : Buffer.from(Buffer.concat([this.tail, chunk]).subarray(-this.tailCap));
  }

  /** Bytes printed but not in text(): the middle, plus any partial UTF-8 character at either cut. */
  get clippedBytes(): number {
    return this.parts().clipped;
  }

  text(): string {
    return this.decoded().text;
  }

  /** The text, and how many invalid UTF-8 sequences the program printed (each shown as U+FFFD). */
  decoded(): { text: string; invalidUtf8: number } {
    const { head, tail, clipped } = this.parts();
    if (clipped === 0) {
      // Decoded as one buffer: a character split between head and tail must not become two U+FFFD.
      const all = Buffer.concat([head, tail]);
      return { text: all.toString("utf8"), invalidUtf8: invalidSequences(all) };
    }
    return {
      text: `${head.toString("utf8")}\n…[clipped ${clipped} bytes]…\n${tail.toString("utf8")}`,
      invalidUtf8: invalidSequences(head) + invalidSequences(tail),
    };
  }

  private parts(): { head: Buffer; tail: Buffer; clipped: number } {
    let head = Buffer.concat(this.head);
    let tail = this.tail;
    const gap = this.total - head.length - tail.length;
    if (gap === 0) return { head, tail, clipped: 0 };
    // Cut at character boundaries, so that clipping never invents an invalid sequence the program did not print.
    head = head.subarray(0, utf8End(head));
    tail = tail.subarray(utf8Start(tail));
    return { head, tail, clipped: this.total - head.length - tail.length };
  }
}

/** Length of `b` without a trailing, incomplete UTF-8 character. */
function utf8End(b: Buffer): number {
  for (let i = b.length - 1; i >= Math.max(0, b.length - 4); i--) {
    const c = b[i]!;
    if (c < 0x80) return b.length;
    if (c >= 0xc0) {
      const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      return i + need > b.length ? i : b.length;
    }
  }
  return b.length;
}

/** Offset of the first byte of `b` that is not the continuation of a character cut off before it. */
function utf8Start(b: Buffer): number {
  let i = 0;
  while (i < Math.min(3, b.length) && (b[i]! & 0xc0) === 0x80) i++;
  return i;
}

/** Invalid sequences in `b`: U+FFFD produced by decoding, minus the ones the program printed as such. */
function invalidSequences(b: Buffer): number {
  const text = b.toString("utf8");
  let decoded = 0;
  for (let i = text.indexOf("\uFFFD"); i >= 0; i = text.indexOf("\uFFFD", i + 1)) decoded++;
  if (decoded === 0) return 0;
  const literal = Buffer.from([0xef, 0xbf, 0xbd]);
  let printed = 0;
  for (let i = b.indexOf(literal); i >= 0; i = b.indexOf(literal, i + 3)) printed++;
  return decoded - printed;
}

/**
 * Routes bytes before `marker` to `before` and bytes after it to `after`. The marker is random per run, so
 * a program cannot end its own stdout by accident; a search window of marker.length-1 bytes is carried over
 * so that a marker split across chunks is still found.
 */
export class MarkerSplitter {
  private carry: Buffer = Buffer.alloc(0);
  private found = false;

  constructor(
    private readonly marker: Buffer,
    private readonly before: (b: Buffer) => void,
    private readonly after: (b: Buffer) => void,
  ) {}

  get markerSeen(): boolean {
    return this.found;
  }

  push(chunk: Buffer): void {
    if (this.found) {
      this.after(chunk);
      return;
    }
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const at = buf.indexOf(this.marker);
    if (at >= 0) {
      this.found = true;
      this.carry = Buffer.alloc(0);
      if (at > 0) this.before(buf.subarray(0, at));
      const rest = buf.subarray(at + this.marker.length);
      if (rest.length > 0) this.after(rest);
      return;
    }
    const keep = Math.min(buf.length, this.marker.length - 1);
    if (buf.length > keep) this.before(buf.subarray(0, buf.length - keep));
    this.carry = Buffer.from(buf.subarray(buf.length - keep));
  }

  end(): void {
    if (!this.found && this.carry.length > 0) this.before(this.carry);
    this.carry = Buffer.alloc(0);
  }
}

/** Collects up to `cap` bytes and remembers whether more arrived. */
export class BoundedBuffer {
  private chunks: Buffer[] = [];
  private len = 0;
  overflowed = false;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    if (this.len + chunk.length > this.cap) {
      this.overflowed = true;
      chunk = chunk.subarray(0, this.cap - this.len);
    }
    if (chunk.length === 0) return;
    this.chunks.push(Buffer.from(chunk));
    this.len += chunk.length;
  }

  value(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
