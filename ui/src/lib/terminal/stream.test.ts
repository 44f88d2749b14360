import { describe, expect, it } from "vitest";
import { decodeFrame, encodeFrame, FRAME_DATA, FRAME_EXIT, FRAME_SCREEN, OrderedWriter, TerminalStream } from "./stream";

const KEY = "echo:s1";
const frame = (kind: number, offset: number, payload: string | Uint8Array): ArrayBuffer =>
  encodeFrame(KEY, kind, offset, payload).slice().buffer;

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe("decodeFrame", () => {
  it("reads kind, a little-endian u64 offset, the session key and the payload", () => {
    const f = decodeFrame(encodeFrame("claude:ü-1", FRAME_DATA, 2 ** 40 + 5, "hello"));
    expect(f?.sessionKey).toBe("claude:ü-1");
    expect(f?.frame.kind).toBe("data");
    expect(f?.frame.offset).toBe(2 ** 40 + 5);
    expect(f && "data" in f.frame ? text(f.frame.data) : "").toBe("hello");
  });

  it("reads the layout byte for byte as the Rust side writes it", () => {
    // TerminalFrame { session_key: "k", kind: DATA, offset: 0x0102_0304, payload: "hi" }.encode()
    const bytes = [1, 1, 4, 3, 2, 1, 0, 0, 0, 0, 1, 0, 107, 104, 105];
    const f = decodeFrame(bytes);
    expect(f?.sessionKey).toBe("k");
    expect(f?.frame.kind).toBe("data");
    expect(f?.frame.offset).toBe(0x01020304);
    expect(f && "data" in f.frame ? text(f.frame.data) : "").toBe("hi");
    expect(Array.from(encodeFrame("k", FRAME_DATA, 0x01020304, "hi"))).toEqual(bytes);
  });

  it("accepts a Uint8Array view with a byte offset and a plain number array", () => {
    const raw = encodeFrame(KEY, FRAME_SCREEN, 7, "scr");
    const padded = new Uint8Array(raw.length + 3);
    padded.set(raw, 3);
    const f = decodeFrame(padded.subarray(3));
    expect(f?.frame.kind).toBe("screen");
    expect(f?.frame.offset).toBe(7);
    expect(decodeFrame(Array.from(raw))?.frame.offset).toBe(7);
  });

  it("parses the exit message and rejects malformed frames", () => {
    const f = decodeFrame(frame(FRAME_EXIT, 3, JSON.stringify({ code: 2, signal: null, screen: "bye" })));
    expect(f).toEqual({ sessionKey: KEY, frame: { kind: "exit", offset: 3, exit: { code: 2, signal: null, screen: "bye" } } });
    expect(decodeFrame(new Uint8Array(4))).toBeNull();
    expect(decodeFrame(frame(9, 0, ""))).toBeNull();
    expect(decodeFrame(frame(FRAME_EXIT, 0, "{not json"))).toBeNull();
    const input = encodeFrame(KEY, FRAME_DATA, 0, "x");
    input[0] = 2; // terminal input, never sent down
    expect(decodeFrame(input)).toBeNull();
    // A key longer than the frame.
    expect(decodeFrame(encodeFrame(KEY, FRAME_DATA, 0, "").subarray(0, 14))).toBeNull();
  });
});

describe("TerminalStream", () => {
  const apply = (s: TerminalStream, buf: ArrayBuffer) => {
    const f = decodeFrame(buf);
    if (!f) throw new Error("bad frame");
    return s.apply(f.frame);
  };

  it("starts from the screen, then writes live output in order", () => {
    const s = new TerminalStream();
    expect(apply(s, frame(FRAME_DATA, 0, "early"))).toBeNull();
    const screen = apply(s, frame(FRAME_SCREEN, 10, "$ "));
    expect(screen?.reset).toBe(true);
    expect(text(screen!.write)).toBe("$ ");
    expect(text(apply(s, frame(FRAME_DATA, 10, "ab"))!.write)).toBe("ab");
    expect(text(apply(s, frame(FRAME_DATA, 12, "cd"))!.write)).toBe("cd");
    expect(s.offset).toBe(14);
  });

  it("re-attach: output the restored screen already holds is not written again", () => {
    const s = new TerminalStream();
    apply(s, frame(FRAME_SCREEN, 0, ""));
    apply(s, frame(FRAME_DATA, 0, "Echo: one\r\n"));
    // The pane re-opens: a new screen current at 20, then a batch that overlaps it.
    const screen = apply(s, frame(FRAME_SCREEN, 20, "Echo: one\r\n$ "));
    expect(screen?.reset).toBe(true);
    expect(apply(s, frame(FRAME_DATA, 15, "abcde"))).toBeNull();
    expect(text(apply(s, frame(FRAME_DATA, 18, "xyzw"))!.write)).toBe("zw");
    expect(s.offset).toBe(22);
  });

  it("reports the exit with its code and last screen", () => {
    const s = new TerminalStream();
    apply(s, frame(FRAME_SCREEN, 0, ""));
    const a = apply(s, frame(FRAME_EXIT, 0, JSON.stringify({ code: 1, signal: null, screen: "oops" })));
    expect(a?.exit).toEqual({ code: 1, signal: null, screen: "oops" });
    expect(a?.write.length).toBe(0);
  });
});

describe("OrderedWriter", () => {
  it("keeps one write in flight and sends what was typed meanwhile in order, batched", async () => {
    const sent: string[] = [];
    const releases: (() => void)[] = [];
    const w = new OrderedWriter(
      (d) =>
        new Promise<void>((resolve) => {
          sent.push(d);
          releases.push(resolve);
        }),
    );
    w.push("a");
    w.push("b");
    w.push("c");
    expect(sent).toEqual(["a"]);
    releases.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toEqual(["a", "bc"]);
    releases.shift()!();
    await new Promise((r) => setTimeout(r, 0));
    w.push("d");
    expect(sent).toEqual(["a", "bc", "d"]);
  });

  it("goes on after a failed write", async () => {
    const sent: string[] = [];
    const errors: unknown[] = [];
    const w = new OrderedWriter(async (d) => {
      sent.push(d);
      if (d === "x") throw new Error("gone");
    }, (e) => errors.push(e));
    w.push("x");
    w.push("y");
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toEqual(["x", "y"]);
    expect(errors.length).toBe(1);
  });
});
