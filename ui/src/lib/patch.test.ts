import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { apply, applyInPlace, emptySnapshot } from "./patch";
import type { SnapshotPatch, UniversalSnapshot } from "../generated";

const dir = join(__dirname, "fixtures");
const read = (name: string) => readFileSync(join(dir, name), "utf8");
const cases: string[] = JSON.parse(read("index.json"));

describe("apply agrees with the Rust patch algebra byte for byte", () => {
  it("has the fixtures", () => expect(cases.length).toBeGreaterThan(15));

  for (const name of cases) {
    it(name, () => {
      const prevText = read(`${name}.prev.json`);
      const prev: UniversalSnapshot = JSON.parse(prevText);
      const patch: SnapshotPatch = JSON.parse(read(`${name}.patch.json`));
      const next = apply(prev, patch);
      expect(JSON.stringify(next) + "\n").toBe(read(`${name}.next.json`));
      // apply leaves prev alone.
      expect(JSON.stringify(prev) + "\n").toBe(prevText);
    });
  }
});

describe("apply", () => {
  it("the empty snapshot serializes like UniversalSnapshot::default()", () => {
    const keys = Object.keys(JSON.parse(read(`${cases[0]}.prev.json`)));
    expect(Object.keys(emptySnapshot())).toEqual(keys);
  });

  it("appends after a replacement", () => {
    const s = emptySnapshot("echo");
    s.text = "old";
    applyInPlace(s, { text: "new", textAppend: "er" });
    expect(s.text).toBe("newer");
  });

  it("upserts tool calls after a replacement and appends unknown ids", () => {
    const call = (id: string, summary: string) => ({
      id,
      name: "Bash",
      summary,
      input: null,
      result: null,
      status: "running" as const,
      kind: "shell" as const,
      parentId: null,
    });
    const s = emptySnapshot("echo");
    applyInPlace(s, { toolCalls: [call("a", "1"), call("b", "1")], toolCallsUpsert: [call("a", "2"), call("c", "1")] });
    expect(s.toolCalls.map((c) => `${c.id}${c.summary}`)).toEqual(["a2", "b1", "c1"]);
  });

  it("leaves the patch alone when it replaces a list and grows it too", () => {
    // Found by the patch_ts fuzz target: the replaced list was the patch's own array,
    // which the upsert (and a later patch's) then pushed into.
    const call = (id: string) => ({
      id,
      name: "Bash",
      summary: id,
      input: null,
      result: null,
      status: "running" as const,
      kind: "shell" as const,
      parentId: null,
    });
    const patch: SnapshotPatch = { toolCalls: [call("a")], toolCallsUpsert: [call("b")] };
    const text = JSON.stringify(patch);
    const s = emptySnapshot("echo");
    applyInPlace(s, patch);
    applyInPlace(s, { toolCallsUpsert: [call("c")] });
    expect(s.toolCalls.map((c) => c.id)).toEqual(["a", "b", "c"]);
    expect(JSON.stringify(patch)).toBe(text);
  });

  it("null clears and absent keeps", () => {
    const s = emptySnapshot("echo");
    s.error = "boom";
    s.model = "m";
    applyInPlace(s, { error: null });
    expect(s.error).toBeNull();
    expect(s.model).toBe("m");
  });
});
