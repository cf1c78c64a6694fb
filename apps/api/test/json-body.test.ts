import { connect, type AddressInfo } from "node:net";
import { Readable } from "node:stream";
import Fastify from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LoopSmithError } from "@loopsmith/core";
import { findBodyProblem, findDuplicateKey, JsonTextScanner, MAX_DEPTH, MAX_NUMBER_LENGTH, MAX_VALUES, registerJsonBody, scanJsonText } from "../src/json-body";

describe("findDuplicateKey", () => {
  it.each([
    ['{"a":1,"a":2}', "body.a"],
    ['{"x":[{"k":1},{"k":1,"k":2}]}', "body.x.1.k"],
    ['{"x":[[1,2],{"y":{"z":0,"z":0}}]}', "body.x.1.y.z"],
    ['{"s":"a \\" \\\\","s":1}', "body.s"],
    ['{"\\u0061":1,"a":2}', "body.a"],
    ['{"a\\\\":1,"a\\\\":2}', "body.a\\"],
  ])("finds the repeat in %s at %s", (text, path) => {
    JSON.parse(text); // every case is valid JSON
    expect(findDuplicateKey(text)?.path).toBe(path);
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',
    '{"s":"{\\"a\\":1,\\"a\\":2}","t":"\\\\","a":1}',
    '[{"a":1},{"a":1}]',
    '"just a string with \\"a\\":1,\\"a\\":1"',
    '{"a":"\\\\\\"","b":"c"}',
  ])("finds none in %s", (text) => {
    JSON.parse(text);
    expect(findDuplicateKey(text)).toBeNull();
  });
});

describe("findBodyProblem", () => {
  it("finds lone surrogates in values and keys, not in pairs", () => {
    expect(findBodyProblem({ a: ["ok", "x\ud800"] })?.path).toBe("body.a.1");
    expect(findBodyProblem({ a: "\udfff" })?.message).toMatch(/lone UTF-16 surrogate/);
    expect(findBodyProblem({ ["k\udc00"]: 1 })?.message).toMatch(/key contains a lone/);
    expect(findBodyProblem({ a: "😀 \ud83d\ude00" })).toBeNull();
    // A high surrogate at the very end, and a low one at the very start.
    expect(findBodyProblem({ a: "ok\ud83d" })?.path).toBe("body.a");
    expect(findBodyProblem({ a: "\ude00ok" })?.path).toBe("body.a");
  });
});

// Issue 25: bodies whose cost grows with their values, not their bytes, are refused from one linear scan
// of the text, before JSON.parse builds anything, and a refusal never echoes the offending literal.
describe("scanJsonText refuses before JSON.parse builds anything (issue 25)", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    ["5 million nested arrays", () => "[".repeat(5_000_000) + "]".repeat(5_000_000), `body${".0".repeat(MAX_DEPTH)}`],
    ["a million nested objects", () => '{"a":'.repeat(1_000_000) + "1" + "}".repeat(1_000_000), `body${".a".repeat(MAX_DEPTH)}`],
    ["deep inside a field", () => `{"objective":"x","checks":[{"id":"c","params":{"v":${"[".repeat(100)}${"]".repeat(100)}}}]}`, `body.checks.0.params.v${".0".repeat(MAX_DEPTH - 4)}`],
  ])("%s: nested deeper than MAX_DEPTH, with the path of the first level too deep", (_, make, path) => {
    const parse = vi.spyOn(JSON, "parse");
    const { refusal } = scanJsonText(make());
    expect(refusal).toEqual({ path, message: `nested deeper than ${MAX_DEPTH} levels` });
    expect(parse).not.toHaveBeenCalled();
  });

  it("accepts exactly MAX_DEPTH levels", () => {
    const text = "[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH);
    expect(scanJsonText(text).refusal).toBeNull();
    expect(scanJsonText("[" + text + "]").refusal?.message).toMatch(/nested deeper/);
  });

  it("counts brackets inside strings (with escapes) as text, not nesting", () => {
    const text = JSON.stringify({ a: "[".repeat(1000) + '\\"[[[' + "{".repeat(1000), b: ['"\\', "]]]]"] });
    expect(scanJsonText(text)).toEqual({ refusal: null, duplicateKey: null, lossyInteger: null });
  });

  it("refuses a 15 MiB integer literal without converting it, and shows only its first digits", () => {
    const literal = "9".repeat(15 * 1024 * 1024);
    const bigint = vi.spyOn(globalThis, "BigInt");
    const { refusal } = scanJsonText(`{"checks":[{"id":"x","params":{"n":${literal}}}]}`);
    expect(refusal?.path).toBe("body.checks.0.params.n");
    expect(refusal?.message).toMatch(/^a number literal \(9{40}…\) is longer than 400 characters$/);
    expect(bigint).not.toHaveBeenCalled();
  });

  it.each([
    ["an integer", "1".repeat(MAX_NUMBER_LENGTH + 1)],
    ["a fraction", "0." + "5".repeat(MAX_NUMBER_LENGTH)],
    ["an exponent", "1e" + "0".repeat(MAX_NUMBER_LENGTH)],
    ["a negative integer", "-" + "7".repeat(MAX_NUMBER_LENGTH)],
  ])("refuses %s literal longer than MAX_NUMBER_LENGTH characters", (_, literal) => {
    expect(scanJsonText(`[1,${literal}]`).refusal?.path).toBe("body.1");
    expect(scanJsonText(`[1,${literal.slice(0, MAX_NUMBER_LENGTH)}]`).refusal).toBeNull();
  });

  it("finds an integer beyond 2^53 from the text, with a bounded message", () => {
    expect(scanJsonText('{"a":[1,{"b":9007199254740993}]}').lossyInteger?.path).toBe("body.a.1.b");
    expect(scanJsonText("[9007199254740992]").lossyInteger?.path).toBe("body.0");
    expect(scanJsonText("[-9007199254740992]").lossyInteger?.path).toBe("body.0");
    const long = "8".repeat(MAX_NUMBER_LENGTH);
    const { lossyInteger } = scanJsonText(`{"x":${long}}`);
    expect(lossyInteger?.message).toMatch(/^the integer 8{40}… \(400 digits\) is beyond 2\^53/);
    expect(lossyInteger?.message).not.toContain("8".repeat(41));
  });

  it.each(["[9007199254740991]", "[-9007199254740991]", "[12345678901234567890.5]", "[1e400]", "[1234567890123456e10]", '["9007199254740993"]', '{"9007199254740993":1}'])(
    "finds no lossy integer in %s",
    (text) => expect(scanJsonText(text).lossyInteger).toBeNull(),
  );

  it("refuses more than MAX_VALUES values (keys not counted) with the path where the bound was passed", () => {
    const at = (n: number) => "[" + Array.from({ length: n - 1 }, () => "{}").join(",") + "]"; // n values with the array
    expect(scanJsonText(at(MAX_VALUES)).refusal).toBeNull();
    expect(scanJsonText(at(MAX_VALUES + 1)).refusal).toEqual({
      path: `body.${MAX_VALUES - 1}`,
      message: `holds more than ${MAX_VALUES} JSON values; send large data as an input file or a checker file`,
    });
    const keys = "{" + Array.from({ length: MAX_VALUES - 1 }, (_, i) => `"k${i}":true`).join(",") + "}";
    expect(scanJsonText(keys).refusal).toBeNull();
    expect(scanJsonText('["a",null,false,1,{},[]]').refusal).toBeNull();
  });

  it("clips long keys in paths and messages", () => {
    const key = "k".repeat(100_000);
    const dup = scanJsonText(`{"${key}":1,"${key}":2}`).duplicateKey!;
    expect(dup.path).toBe(`body.${"k".repeat(40)}…`);
    expect(dup.message.length).toBeLessThan(100);
  });

  it("finds the same in a text fed in pieces of any size as in the whole text", () => {
    const texts = [
      '{"a":[1,{"b":9007199254740993}],"k\\\\":"x\\"y\\\\","k\\\\":2,"n":-12.5e3,"t":[true,false,null]}',
      JSON.stringify({ s: "\\".repeat(7) + '"' + "[".repeat(70), deep: "x" }),
      "[".repeat(MAX_DEPTH + 1) + "]".repeat(MAX_DEPTH + 1),
      `{"n":${"7".repeat(MAX_NUMBER_LENGTH + 1)}}`,
      `{"n":${"7".repeat(MAX_NUMBER_LENGTH)}}`,
      '{"\\u0061":1,"a":2}',
      '[12345678901234567890,"\\\\",{"a":{"b":{"b":1,"b":2}}}]',
    ];
    expect(scanJsonText(texts[0]!)).toMatchObject({ duplicateKey: { path: "body.k\\" }, lossyInteger: { path: "body.a.1.b" } });
    for (const text of texts) {
      const whole = scanJsonText(text);
      for (const size of [1, 2, 3, 5, 16, 61]) {
        const scanner = new JsonTextScanner();
        for (let at = 0; at < text.length && scanner.push(text.slice(at, at + size)); at += size);
        expect(scanner.end(), `${text.slice(0, 60)} in pieces of ${size}`).toEqual(whole);
      }
    }
  });

  it("ends on a text that is not JSON, whatever it holds", () => {
    for (const text of ['{"a', '{"a\\"}', "]]]}}}", "[[[", '{"a":1,"a":2', "-", '"\\', "tfn", '{"\\x":1}'])
      expect(() => scanJsonText(text)).not.toThrow();
  });
});

describe("the body parser (issue 25)", () => {
  async function app() {
    const a = Fastify({ bodyLimit: 32 * 1024 * 1024 });
    registerJsonBody(a);
    a.setErrorHandler((err, _req, reply) => (err instanceof LoopSmithError ? reply.status(err.status).send(err.toBody()) : reply.status(500).send({ err: String(err) })));
    a.post("/", async (req) => ({ got: req.body }));
    await a.ready();
    return a;
  }
  const post = async (payload: string) => {
    const a = await app();
    try {
      const res = await a.inject({ method: "POST", url: "/", headers: { "content-type": "application/json" }, payload });
      return { status: res.statusCode, body: res.json() as { error: { code: string; message: string; details: { path: string; message: string }[] } } };
    } finally {
      await a.close();
    }
  };

  it.each([
    ["a 15 MiB integer", `{"n":${"9".repeat(15 * 1024 * 1024)}}`, "body.n"],
    ["10 MB of nested arrays", "[".repeat(5_000_000) + "]".repeat(5_000_000), `body${".0".repeat(MAX_DEPTH)}`],
    ["10 MB of nested objects", '{"a":'.repeat(2_000_000) + "1" + "}".repeat(2_000_000), `body${".a".repeat(MAX_DEPTH)}`],
    ["3 million empty objects", "[" + "{},".repeat(3_000_000) + "{}]", `body.${MAX_VALUES - 1}`],
    ["an integer beyond 2^53", '{"checks":[{"params":{"v":[1,90071992547409930000]}}]}', "body.checks.0.params.v.1"],
  ])("%s: 400 LS_ERR_VALIDATION at its path, the message short", async (_, payload, path) => {
    const { status, body } = await post(payload);
    expect(status).toBe(400);
    expect(body.error.code).toBe("LS_ERR_VALIDATION");
    expect(body.error.details).toEqual([{ path, message: expect.any(String) }]);
    expect(body.error.message.length).toBeLessThan(400);
  });

  it("reads a body piece by piece: a character split between pieces is fine, one cut off at the end is not UTF-8", async () => {
    const a = await app();
    try {
      const pieces = (bufs: number[][]) => Readable.from(bufs.map((b) => Buffer.from(b)));
      const ok = await a.inject({ method: "POST", url: "/", headers: { "content-type": "application/json" }, payload: pieces([[0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3], [0xa9, 0x22, 0x7d]]) });
      expect(ok.json()).toEqual({ got: { a: "é" } });
      const cut = await a.inject({ method: "POST", url: "/", headers: { "content-type": "application/json" }, payload: pieces([[0x22, 0x61], [0xc3]]) });
      expect(cut.json().error.details).toEqual([{ path: "body", message: "not valid UTF-8" }]);
    } finally {
      await a.close();
    }
  });

  it("neither keeps nor decodes what follows the spot a body is refused at, and still answers once it is in", async () => {
    const a = await app();
    await a.listen({ port: 0, host: "127.0.0.1" });
    let decoded = 0;
    type Decode = (input?: ArrayBufferView | ArrayBuffer, options?: { stream?: boolean }) => string;
    const proto = TextDecoder.prototype as { decode: Decode };
    const decode = proto.decode;
    vi.spyOn(proto, "decode").mockImplementation(function (this: unknown, input, options) {
      decoded += input?.byteLength ?? 0;
      return decode.call(this, input, options);
    });
    try {
      const { port } = a.server.address() as AddressInfo;
      const total = 10 * 1024 * 1024;
      const head = "[".repeat(1024);
      // Over a real socket, so that the body arrives in many pieces: 1 KB of "[[[[", then 10 MB more.
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1");
        let got = "";
        socket.on("data", (d: Buffer) => {
          got += d.toString("latin1");
          const end = got.indexOf("\r\n\r\n");
          const length = Number(/content-length: (\d+)/i.exec(got)?.[1]);
          if (end >= 0 && got.length >= end + 4 + length) {
            socket.destroy();
            resolve(got.slice(end + 4));
          }
        });
        socket.on("error", reject);
        socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${total}\r\n\r\n${head}`);
        socket.write("]".repeat(total - head.length));
      });
      expect(JSON.parse(answer).error.details).toEqual([{ path: `body${".0".repeat(MAX_DEPTH)}`, message: `nested deeper than ${MAX_DEPTH} levels` }]);
      // Only the pieces up to the refusal were decoded (the socket delivers at most 64 KB at a time).
      expect(decoded).toBeGreaterThan(0);
      expect(decoded).toBeLessThan(1024 * 1024);
    } finally {
      await a.close();
    }
  });

  it("still parses what it accepts, duplicate keys and surrogates still refused after the parse", async () => {
    expect((await post('{"a":[1,"x",{"b":null}],"n":9007199254740991}')).body).toEqual({ got: { a: [1, "x", { b: null }], n: 9007199254740991 } });
    expect((await post('{"a":1,"a":2}')).body.error.details).toEqual([{ path: "body.a", message: 'the key "a" appears more than once in this object' }]);
    expect((await post('{"a":"\\ud800"}')).body.error.details[0]!.path).toBe("body.a");
    expect((await post('{"a":[1,')).body.error.message).toMatch(/not valid JSON/);
  });
});
