import { describe, expect, it } from "vitest";
import type { SearchHit, SessionInfo } from "../generated";
import { sidebarRows } from "./sidebar-rows";

const session = (key: string, workdir: string) =>
  ({ sessionKey: key, agent: "echo", sessionId: null, title: key, workdir, model: null, phase: "idle", turns: 1, createdAt: 0, updatedAt: 0 }) as SessionInfo;
const hit = (taskId: string): SearchHit => ({ sessionKey: "echo:a", taskId, snippet: "x", rank: 0 }) as unknown as SearchHit;

describe("sidebarRows", () => {
  it("flattens workspaces, their sessions and the transcript hits, keyed uniquely", () => {
    const rows = sidebarRows(
      [{ workdir: "/w/a", sessions: [session("echo:1", "/w/a"), session("echo:2", "/w/a")] }, { workdir: "/w/b", sessions: [] }],
      [hit("t1")],
      "word",
    );
    expect(rows.map((r) => r.key)).toEqual(["ws:/w/a", "s:echo:1", "s:echo:2", "ws:/w/b", "hits", "h:t1"]);
    expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
  });

  it("says what to do when there is nothing, and hides hits without a search", () => {
    expect(sidebarRows([], [], "")).toEqual([{ key: "empty", kind: "empty", text: "Open a workspace folder to start." }]);
    expect(sidebarRows([], [], "zz")[0]).toMatchObject({ text: "No session matches." });
    expect(sidebarRows([], [hit("t")], "").map((r) => r.kind)).toEqual(["empty"]);
  });

  it("draws thousands of sessions as that many rows (the list virtualizes them)", () => {
    const many = Array.from({ length: 5000 }, (_, i) => session(`echo:${i}`, "/w/a"));
    expect(sidebarRows([{ workdir: "/w/a", sessions: many }], [], "").length).toBe(5001);
  });
});
