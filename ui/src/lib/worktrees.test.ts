import { afterEach, describe, expect, it, vi } from "vitest";
import type { SessionInfo } from "../generated";
import { FakeTransport } from "./fake-transport";
import { fanoutGroup, fanoutName, groupByWorktree, WorktreeStore } from "./worktrees.svelte";

const inWorktree = { sessionKey: "echo:1", workdir: "/wt/a", worktree: { name: "a", path: "/wt/a", branch: "weft/a", base: "main" } } as SessionInfo;

describe("WorktreeStore", () => {
  afterEach(() => vi.useRealTimers());

  it("reads the list at most every few seconds, and once more when they are up, so a turn's end shows", async () => {
    vi.useFakeTimers();
    const t = new FakeTransport();
    const store = new WorktreeStore(t);
    const reads = () => t.calls.filter((c) => c.verb === "listWorktrees").length;
    await store.refresh([]);
    expect(reads()).toBe(0);
    await store.refresh([inWorktree]);
    expect(reads()).toBe(1);
    t.worktrees.push({ name: "a", repo: "/r", path: "/wt/a", branch: "weft/a", base: "main", ahead: 0, behind: 0, dirty: true, ports: "1-2", sessions: ["echo:1"] });
    await store.refresh([inWorktree]);
    await store.refresh([inWorktree]);
    expect(reads()).toBe(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(reads()).toBe(2);
    expect(store.list[0].dirty).toBe(true);
    expect(store.repoOf("/wt/a/sub")).toBe("/r");
  });
});

describe("worktree groups and fan-out names", () => {
  it("groups sessions by worktree in the listed order, unknown ones last", () => {
    const b = { ...inWorktree, sessionKey: "echo:2", worktree: { ...inWorktree.worktree!, name: "b", path: "/wt/b" } } as SessionInfo;
    const groups = groupByWorktree([inWorktree, b], [{ name: "b", repo: "/r", path: "/wt/b", branch: "weft/b", base: "main", ahead: 1, behind: 0, dirty: false, ports: "", sessions: [] }]);
    expect(groups.map((g) => [g.name, g.known, g.ahead])).toEqual([["b", true, 1], ["a", false, 0]]);
  });

  it("names a fan-out's worktrees so their group is read back", () => {
    expect(fanoutName("00ab12", 1, "Claude ACP")).toBe("fan-00ab12-2-claude-acp");
    expect(fanoutGroup("fan-00ab12-2-claude-acp")).toBe("00ab12");
    expect(fanoutGroup("fix-parser")).toBeNull();
  });
});
