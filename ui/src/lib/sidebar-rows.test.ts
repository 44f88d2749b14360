import { describe, expect, it } from "vitest";
import type { LibraryHit, LibrarySession, SearchHit, SessionInfo } from "../generated";
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

  it("puts each worktree's sessions under a head of its own after the workspace's, counted in the workspace's fold", () => {
    const wt = { name: "fix", path: "/d/wt/fix", branch: "weft/fix", base: "main", ahead: 2, behind: 0, dirty: true, known: true, ports: null, sessions: [session("echo:3", "/d/wt/fix")] };
    const groups = [{ workdir: "/w/a", sessions: [session("echo:1", "/w/a")], worktrees: [wt] }];
    const rows = sidebarRows(groups, [], "");
    expect(rows.map((r) => r.key)).toEqual(["ws:/w/a", "s:echo:1", "wt:/d/wt/fix", "s:echo:3"]);
    expect(rows[3]).toMatchObject({ kind: "session", nested: true });
    expect(rows[1]).not.toHaveProperty("nested");
    const folded = sidebarRows(groups, [], "", [], [], [], new Set(["/w/a"]));
    expect(folded).toEqual([{ key: "ws:/w/a", kind: "workspace", workdir: "/w/a", collapsed: true, count: 2 }]);
  });

  it("draws thousands of sessions as that many rows (the list virtualizes them)", () => {
    const many = Array.from({ length: 5000 }, (_, i) => session(`echo:${i}`, "/w/a"));
    expect(sidebarRows([{ workdir: "/w/a", sessions: many }], [], "").length).toBe(5001);
  });
});

const native = (key: string, workdir: string | null, title = key) =>
  ({ sessionKey: key, origin: "native", agent: "claude", sessionId: key.split(":")[1], title, workdir }) as unknown as LibrarySession;

describe("sidebarRows with the agents' own sessions", () => {
  it("puts each native session under its workspace after Weft's, a folder only they know under a head of its own", () => {
    const rows = sidebarRows(
      [{ workdir: "/w/a", sessions: [session("echo:1", "/w/a")] }],
      [],
      "",
      [native("claude:n1", "/w/a"), native("codex:n2", "/w/other"), native("gemini:n3", null)],
    );
    expect(rows.map((r) => r.key)).toEqual(["ws:/w/a", "s:echo:1", "n:claude:n1", "ws:/w/other", "n:codex:n2", "natives:unknown", "n:gemini:n3"]);
    expect(rows[2]).toMatchObject({ kind: "native", session: { origin: "native" } });
  });

  it("does not repeat a native session Weft already runs, and filters them by the search", () => {
    const groups = [{ workdir: "/w/a", sessions: [session("claude:n1", "/w/a")] }];
    const natives = [native("claude:n1", "/w/a"), native("claude:n2", "/w/a", "refactor the parser")];
    expect(sidebarRows(groups, [], "", natives).map((r) => r.key)).toEqual(["ws:/w/a", "s:claude:n1", "n:claude:n2"]);
    expect(sidebarRows([], [], "PARSER", natives).map((r) => r.key)).toEqual(["ws:/w/a", "n:claude:n2"]);
    expect(sidebarRows([], [], "nothing-like-it", natives).map((r) => r.kind)).toEqual(["empty"]);
  });

  it("lists their transcripts' matches after Weft's while searching, never one Weft runs", () => {
    const nh = (key: string) => ({ sessionKey: key, origin: "native", snippet: "«x»" }) as unknown as LibraryHit;
    const groups = [{ workdir: "/w/a", sessions: [session("claude:n1", "/w/a")] }];
    expect(sidebarRows(groups, [hit("t1")], "x", [], [nh("claude:n2"), nh("claude:n1")]).map((r) => r.key)).toEqual([
      "ws:/w/a", "s:claude:n1", "hits", "h:t1", "nh:claude:n2:0",
    ]);
    expect(sidebarRows([], [], "x", [], [nh("codex:n3")]).map((r) => r.kind)).toEqual(["hits", "native-hit"]);
    expect(sidebarRows([], [], "", [], [nh("codex:n3")]).map((r) => r.kind)).toEqual(["empty"]);
  });

  it("keeps a removed workspace off the list though an agent's own session ran there, until a search", () => {
    const natives = [native("claude:n1", "/w/gone", "parser work"), native("claude:n2", "/w/kept")];
    expect(sidebarRows([], [], "", natives, [], ["/w/gone"]).map((r) => r.key)).toEqual(["ws:/w/kept", "n:claude:n2"]);
    expect(sidebarRows([], [], "parser", natives, [], ["/w/gone"]).map((r) => r.key)).toEqual(["ws:/w/gone", "n:claude:n1"]);
    expect(sidebarRows([], [], "", natives).map((r) => r.key)).toContain("ws:/w/gone");
  });

  it("draws thousands of native sessions as rows of the virtualized list", () => {
    const many = Array.from({ length: 5000 }, (_, i) => native(`claude:${i}`, "/w/a"));
    expect(sidebarRows([{ workdir: "/w/a", sessions: [] }], [], "", many).length).toBe(5001);
  });

  it("folds a workspace to its head (with how many it holds), unless a search is on", () => {
    const groups = [
      { workdir: "/a", sessions: [session("echo:1", "/a"), session("echo:2", "/a")] },
      { workdir: "/b", sessions: [session("echo:3", "/b")] },
    ];
    const rows = sidebarRows(groups, [], "", [], [], [], new Set(["/a"]));
    expect(rows.map((r) => r.key)).toEqual(["ws:/a", "ws:/b", "s:echo:3"]);
    expect(rows[0]).toMatchObject({ collapsed: true, count: 2 });
    expect(sidebarRows(groups, [], "echo", [], [], [], new Set(["/a"])).map((r) => r.key)).toContain("s:echo:1");
  });
});
