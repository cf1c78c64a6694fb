import { describe, expect, it } from "vitest";
import { ClippedCapture, MarkerSplitter, createDemuxer } from "../src/output";
import { Sanitiser, storable } from "../src/storable";

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

  it("issue 16.2: clips at character boundaries, so only the program's own invalid UTF-8 is counted", () => {
    // "é" is 2 bytes: the head cut (5 bytes) and the tail cut both land inside one.
    const c = new ClippedCapture(10);
    c.push(Buffer.from("abcdé" + "x".repeat(20) + "éwxyz"));
    const d = c.decoded();
    expect(d).toEqual({ text: "abcd\n…[clipped 24 bytes]…\nwxyz", invalidUtf8: 0 });
    expect(c.clippedBytes).toBe(24);

    const whole = new ClippedCapture(10);
    for (const b of Buffer.from("aé€b")) whole.push(Buffer.from([b]));
    expect(whole.decoded()).toEqual({ text: "aé€b", invalidUtf8: 0 });

    const bad = new ClippedCapture(100);
    bad.push(Buffer.from([0x61, 0xff, 0x62, 0xc3]));
    bad.push(Buffer.from("\uFFFD"));
    expect(bad.decoded()).toEqual({ text: "a\uFFFDb\uFFFD\uFFFD", invalidUtf8: 2 });
  });
});

describe("storable", () => {
  it("issue 16.2: replaces NUL and unpaired surrogates, keeps pairs, and the sanitiser says what it did", () => {
    expect(storable("a\0b\0")).toEqual({ text: "a\u2400b\u2400", nul: 2, surrogates: 0 });
    expect(storable("\udcff x \ud83d \ud83d\ude00")).toEqual({ text: "\uFFFD x \uFFFD \ud83d\ude00", nul: 0, surrogates: 2 });
    const s = new Sanitiser();
    expect(s.clean("stdout", "plain")).toBe("plain");
    expect(s.notes).toEqual([]);
    expect(s.clean((n) => `artifact ${n}`, "x\0\udcff")).toBe("x\u2400\uFFFD");
    expect(s.notes).toEqual(["artifact x\u2400\uFFFD: 1 NUL byte shown as \u2400 (U+2400) and 1 unpaired UTF-16 surrogate shown as U+FFFD, so that it can be stored"]);
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
