import { describe, expect, it } from "vitest";
import { flushSync } from "svelte";
import { LiveSnapshot } from "./live-snapshot.svelte";
import type { ToolCall } from "../generated";

const call = (id: string, status: ToolCall["status"] = "running"): ToolCall => ({
  id, name: "Read", summary: id, input: null, result: null, status, kind: "read", parentId: null,
});

describe("LiveSnapshot", () => {
  it("a text delta wakes only readers of text", () => {
    const live = new LiveSnapshot();
    live.apply({ phase: "streaming", taskId: "t", toolCalls: Array.from({ length: 1000 }, (_, i) => call(`c${i}`)) });
    let textRuns = 0;
    let toolRuns = 0;
    const stop = $effect.root(() => {
      $effect(() => {
        void live.text;
        textRuns++;
      });
      $effect(() => {
        void live.toolCalls;
        toolRuns++;
      });
    });
    flushSync();
    for (let i = 0; i < 10; i++) {
      live.apply({ textAppend: "x" });
      flushSync();
    }
    expect(live.text).toBe("xxxxxxxxxx");
    expect(textRuns).toBe(11);
    expect(toolRuns).toBe(1);
    const before = live.toolCalls;
    live.apply({ toolCallsUpsert: [call("c5", "done")] });
    flushSync();
    expect(toolRuns).toBe(2);
    expect(live.toolCalls).not.toBe(before);
    expect(live.toolCalls[5].status).toBe("done");
    expect(live.toolCalls[4]).toBe(before[4]);
    stop();
  });

  it("plain() is detached from later changes", () => {
    const live = new LiveSnapshot();
    live.apply({ taskId: "t", toolCalls: [call("a")], artifactsAppend: [{ url: null, path: "/x", fileName: "x", mime: null, kind: "document", caption: null }] });
    const frozen = live.plain();
    live.apply({ toolCallsUpsert: [call("b")], textAppend: "more" });
    expect(frozen.toolCalls.map((c) => c.id)).toEqual(["a"]);
    expect(frozen.text).toBe("");
    expect(Object.keys(frozen)[0]).toBe("phase");
  });

  it("carries a pending change of agent in and out (recordedAgent)", () => {
    const live = new LiveSnapshot({ ...new LiveSnapshot().plain(), agent: "claude", recordedAgent: "codex" });
    expect(live.recordedAgent).toBe("codex");
    expect(live.plain().recordedAgent).toBe("codex");
    live.apply({ recordedAgent: null });
    expect(live.recordedAgent ?? null).toBeNull();
    expect("recordedAgent" in live.plain()).toBe(false);
  });
});
