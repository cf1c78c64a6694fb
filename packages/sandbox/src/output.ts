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
    this.tail = Buffer.from(Buffer.concat([this.tail, chunk]).subarray(-this.tailCap));
  }

  get clippedBytes(): number {
    return this.total - this.headLen - this.tail.length;
  }

  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    const clipped = this.clippedBytes;
    if (clipped === 0) return head + this.tail.toString("utf8");
    return `${head}\n…[clipped ${clipped} bytes]…\n${this.tail.toString("utf8")}`;
  }
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
