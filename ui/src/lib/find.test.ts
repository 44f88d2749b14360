import { describe, expect, it } from "vitest";
import type { ToolCall, UniversalSnapshot } from "../generated";
import { emptySnapshot } from "./patch";
import { findRows, step } from "./find";
import { transcriptItems } from "./transcript-items";

const call = (i: number): ToolCall =>
  ({ id: `c${i}`, name: "Read", summary: `Read src/file_${i}.rs`, input: {}, result: `secret ${i}`, status: "done", kind: "read", parentId: null }) as ToolCall;

function turn(taskId: string, prompt: string, text: string, calls: ToolCall[] = []): UniversalSnapshot {
  return { ...emptySnapshot("echo"), taskId, prompt, text, phase: "done", toolCalls: calls };
}

describe("findRows", () => {
  it("finds a word in every row's data, drawn or not, in order", () => {
    const calls = Array.from({ length: 10000 }, (_, i) => call(i));
    const turns = [turn("t1", "ten thousand calls", "Ran them.", calls), turn("t2", "and now", "Zebra crossing")];
    const items = transcriptItems(turns, 0);
    expect(findRows(items, turns, "file_4321.rs")).toEqual(["t1:c:c4321"]);
    expect(findRows(items, turns, "ZEBRA")).toEqual(["t2:text"]);
    expect(findRows(items, turns, "ran them")).toEqual(["t1:text"]);
    expect(findRows(items, turns, "Calls")).toEqual(["t1:prompt"]);
    // What a collapsed row does not show is not a hit.
    expect(findRows(items, turns, "secret 7")).toEqual([]);
    expect(findRows(items, turns, "  ")).toEqual([]);
  });

  it("steps through hits, wrapping both ways", () => {
    expect(step(-1, 1, 3)).toBe(0);
    expect(step(-1, -1, 3)).toBe(2);
    expect(step(2, 1, 3)).toBe(0);
    expect(step(0, -1, 3)).toBe(2);
    expect(step(0, 1, 0)).toBe(-1);
  });
});
