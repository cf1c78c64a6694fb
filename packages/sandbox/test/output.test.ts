import { describe, expect, it } from "vitest";
import { ClippedCapture, MarkerSplitter, createDemuxer } from "../src/output";

describe("ClippedCapture", () => {
  it("keeps everything up to the cap", () => {
    const c = new ClippedCapture(10);
    c.push(Buffer.from("hello"));
    c.push(Buffer.from("world"));
    expect(c.text()).toBe("helloworld");
    expect(c.clippedBytes).toBe(0);
  });

  it("keeps head and tail around a marker once over the cap", () => {
    const c = new ClippedCapture(10);
    for (const part of ["abc", "defgh", "ijklmnop", "qrstuvwxyz"]) c.push(Buffer.from(part));
    expect(c.text()).toBe("abcde\n…[clipped 16 bytes]…\nvwxyz");
    expect(c.clippedBytes).toBe(16);
  });
});

describe("MarkerSplitter", () => {
  it("finds a marker split across chunks at every position", () => {
    const marker = Buffer.from("\0MARK-123\0");
    const whole = Buffer.concat([Buffer.from("program output"), marker, Buffer.from("trailer bytes")]);
    for (let cut = 0; cut <= whole.length; cut++) {
      const before: Buffer[] = [];
      const after: Buffer[] = [];
      const s = new MarkerSplitter(marker, (b) => before.push(Buffer.from(b)), (b) => after.push(Buffer.from(b)));
      s.push(whole.subarray(0, cut));
      s.push(whole.subarray(cut));
      s.end();
      expect(s.markerSeen).toBe(true);
      expect(Buffer.concat(before).toString()).toBe("program output");
      expect(Buffer.concat(after).toString()).toBe("trailer bytes");
    }
  });

  it("hands everything to `before` when no marker comes", () => {
    const before: Buffer[] = [];
    const s = new MarkerSplitter(Buffer.from("\0MARK\0"), (b) => before.push(Buffer.from(b)), () => {
      throw new Error("no trailer expected");
    });
    s.push(Buffer.from("abc\0MA"));
    s.push(Buffer.from("R"));
    s.end();
    expect(s.markerSeen).toBe(false);
    expect(Buffer.concat(before).toString()).toBe("abc\0MAR");
  });
});

describe("createDemuxer", () => {
  it("reassembles frames split anywhere", () => {
    const frame = (type: number, text: string) => {
      const h = Buffer.alloc(8);
      h[0] = type;
      h.writeUInt32BE(Buffer.byteLength(text), 4);
      return Buffer.concat([h, Buffer.from(text)]);
    };
    const bytes = Buffer.concat([frame(1, "out1"), frame(2, "err"), frame(1, "out2")]);
    const got: string[] = [];
    const d = createDemuxer((t, p) => got.push(`${t}:${p.toString()}`));
    for (const b of bytes) d(Buffer.from([b]));
    expect(got).toEqual(["1:out1", "2:err", "1:out2"]);
  });
});
