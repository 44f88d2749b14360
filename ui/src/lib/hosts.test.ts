import { describe, expect, it } from "vitest";
import { agentOfKey, folderOn, hostOfKey, orderByHost, sessionsByHost, splitFolder, withHostHeads } from "./hosts.svelte";
import { sidebarRows } from "./sidebar-rows";
import type { SessionInfo } from "../generated";

const session = (sessionKey: string, workdir: string): SessionInfo => ({
  sessionKey,
  agent: agentOfKey(sessionKey),
  sessionId: null,
  title: sessionKey,
  workdir,
  model: null,
  phase: "idle",
  turns: 1,
  createdAt: 0,
  updatedAt: 0,
  pinned: false,
  archived: false,
});

describe("host names", () => {
  it("reads a key's host and agent the way the shell writes them", () => {
    expect(hostOfKey("claude:1f2e")).toBe("local");
    expect(hostOfKey("gpu/claude:1f2e")).toBe("gpu");
    // An id may hold a slash; the host comes before the agent's colon only.
    expect(hostOfKey("echo:a/b")).toBe("local");
    expect(agentOfKey("gpu/claude:1f2e")).toBe("claude");
    expect(agentOfKey("codex:x:y")).toBe("codex");
  });

  it("reads a folder's host; a local absolute path is never a host's", () => {
    expect(splitFolder("/home/me/proj")).toEqual(["local", "/home/me/proj"]);
    expect(splitFolder("gpu:/home/me/proj")).toEqual(["gpu", "/home/me/proj"]);
    expect(splitFolder("/home/gpu:/x")).toEqual(["local", "/home/gpu:/x"]);
    expect(splitFolder("gpu:relative")).toEqual(["local", "gpu:relative"]);
    expect(folderOn("local", "/x")).toBe("/x");
    expect(folderOn("gpu", "/x")).toBe("gpu:/x");
  });
});

describe("the sidebar's host level", () => {
  const groups = [
    { workdir: "gpu:/srv/a", sessions: [session("gpu/echo:1", "gpu:/srv/a")] },
    { workdir: "/work/demo", sessions: [session("echo:2", "/work/demo")] },
    { workdir: "box:/b", sessions: [session("box/claude:3", "box:/b")] },
    { workdir: "gpu:/srv/c", sessions: [] },
    { workdir: "/work/other", sessions: [] },
  ];

  it("puts this machine's workspaces first, then each host's, each under its head", () => {
    const rows = withHostHeads(sidebarRows(orderByHost(groups), [], ""));
    const heads = rows.flatMap((r) => (r.kind === "host" ? [`host ${r.host} ${r.count}`] : r.kind === "workspace" ? [r.workdir] : []));
    expect(heads).toEqual(["host local 2", "/work/demo", "/work/other", "host gpu 2", "gpu:/srv/a", "gpu:/srv/c", "host box 1", "box:/b"]);
    // Each session stays under its workspace.
    const at = rows.findIndex((r) => r.kind === "session" && r.session.sessionKey === "gpu/echo:1");
    expect(rows[at - 1]).toMatchObject({ kind: "workspace", workdir: "gpu:/srv/a" });
  });

  it("shows no host level to a user whose workspaces are all on this machine", () => {
    const local = groups.filter((g) => splitFolder(g.workdir)[0] === "local");
    const rows = withHostHeads(sidebarRows(orderByHost(local), [], ""));
    expect(rows.some((r) => r.kind === "host")).toBe(false);
  });

  it("counts sessions per host", () => {
    expect(sessionsByHost(groups.flatMap((g) => g.sessions))).toEqual({ gpu: 1, local: 1, box: 1 });
  });
});
