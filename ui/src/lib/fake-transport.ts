// An in-memory Transport for tests and for working on the UI with `npm run dev` and no
// daemon: sessions and snapshots held here, patches pushed by the test. Every verb call
// is recorded in `calls`.
import type {
  ClientRequest,
  PatchEvent,
  ReplyOf,
  SessionInfo,
  SnapshotPatch,
  UniversalSnapshot,
  TrustGrant,
  WorkspaceEntry,
  WorkspaceTrust,
  WorktreeInfo,
  MergeOutcome,
  TurnDiff,
} from "../generated";
import { apply, emptySnapshot } from "./patch";
import { folderOn, splitFolder, type HostForward, type HostLink, type HostStatus } from "./hosts.svelte";
import { VerbError, type AppInfo, type LinkState, type Reply, type Transport } from "./transport";

type Verb = ClientRequest["type"];
/** The wire request of verb `K`. */
type VerbRequest<K extends Verb> = Extract<ClientRequest, { type: K }>;

interface FakeSession {
  info: SessionInfo;
  seq: number;
  current: UniversalSnapshot;
  history: UniversalSnapshot[];
}

export class FakeTransport implements Transport {
  calls: { verb: string; args: unknown[] }[] = [];
  /** It answers the session verbs only: no library, accounts, attachments, MCP or skills. */
  readonly sessionVerbsOnly = true;
  sessions = new Map<string, FakeSession>();
  recents: string[] = [];
  initialWorkspace: string | null = "/work/demo";
  steerOutcome: "injected" | "queued" = "injected";
  /** The hosts list the shell's hosts commands answer. */
  hostList: HostLink[] = [];
  /** What `listDir` answers, by folder as the window names it (`/home/me`, `gpu:/home/me`); entries `name` or `name/` (a folder) or `name/.git` (a repository). */
  folders: Record<string, string[]> = {};
  /** The workspace's files `listWorkspaceFiles` matches (by substring, shortest first). */
  files: WorkspaceEntry[] = [];
  /**
   * What each folder grants and the decision on it, as the daemon keeps it; a folder not
   * here grants nothing. `grantsOf` sets a folder's grants (its hash changes with them).
   */
  trust = new Map<string, WorkspaceTrust>();
  /** The worktrees made for new sessions that asked for one (`listWorktrees`). */
  worktrees: WorktreeInfo[] = [];
  /** What `mergeSession` answers (null: a clean merge into the worktree's base). */
  mergeOutcome: MergeOutcome | null = null;
  /** What `sessionDiff` answers for a session and its `from` (none: no checkpoints). */
  sessionDiffOf: ((sessionKey: string, from: string | null) => TurnDiff) | null = null;
  /** Each session's turns from before Weft's first (`earlierTurns`); none: an unknown session. */
  earlier = new Map<string, UniversalSnapshot[]>();
  private patchHandlers: ((e: PatchEvent) => void)[] = [];
  private resyncHandlers: ((sessionKey: string | null) => void)[] = [];
  private linkHandlers: ((state: LinkState) => void)[] = [];
  private next = 1;

  private record(verb: string, ...args: unknown[]) {
    this.calls.push({ verb, args });
  }

  /** A session; with `host`, one of that host as the desktop shell names it (`HOST/agent:id`; give `workdir` as `HOST:/path`). */
  addSession(agent = "echo", workdir = "/work/demo", title = "a session", host: string | null = null): string {
    const key = `${host ? `${host}/` : ""}${agent}:s${this.next++}`;
    const now = Date.now();
    this.sessions.set(key, {
      info: { sessionKey: key, agent, sessionId: null, title, workdir, model: null, phase: "idle", turns: 0, createdAt: now, updatedAt: now, pinned: false, archived: false },
      seq: 0,
      current: emptySnapshot(agent),
      history: [],
    });
    return key;
  }

  /** Applies `patch` here and delivers it with the next seq (or with `seq` to fake a gap). */
  emit(key: string, patch: SnapshotPatch, seq?: number): PatchEvent {
    const s = this.sessions.get(key);
    if (!s) throw new Error(`no session ${key}`);
    s.seq = seq ?? s.seq + 1;
    s.current = apply(s.current, patch);
    if (patch.phase) s.info.phase = patch.phase;
    const event = { sessionKey: key, seq: s.seq, patch };
    for (const h of this.patchHandlers) h(event);
    return event;
  }

  /** Delivers `patch` as `count` consecutive patches merged, as the daemon sends a burst. */
  emitMerged(key: string, patch: SnapshotPatch, count: number): PatchEvent {
    const s = this.sessions.get(key);
    if (!s) throw new Error(`no session ${key}`);
    const from = s.seq + 1;
    s.seq += count;
    s.current = apply(s.current, patch);
    const event = { sessionKey: key, seq: s.seq, from, patch };
    for (const h of this.patchHandlers) h(event);
    return event;
  }

  /** Ends the current turn, keeping it in the history. */
  finish(key: string) {
    this.emit(key, { phase: "done" });
    const s = this.sessions.get(key);
    if (s) s.history = [...s.history.filter((t) => t.taskId !== s.current.taskId), s.current];
  }

  resync(sessionKey: string | null = null) {
    for (const h of this.resyncHandlers) h(sessionKey);
  }

  /** As the daemon for a new session asking for one: a worktree of `repo` named `name`. */
  private makeWorktree(repo: string, name: string | undefined): WorktreeInfo | null {
    if (name === undefined) return null;
    const picked = name === "auto" ? `wt-${this.next++}` : name;
    const info: WorktreeInfo = {
      name: picked,
      repo,
      path: `/data/weft/worktrees/${repo.split("/").filter(Boolean).at(-1) ?? "repo"}/${picked}`,
      branch: `weft/${picked}`,
      base: "main",
      ahead: 0,
      behind: 0,
      dirty: false,
      ports: "40000-40009",
      sessions: [],
    };
    this.worktrees.push(info);
    return info;
  }

  /** Tells the window the link went down or came back. */
  linkState(state: LinkState) {
    for (const h of this.linkHandlers) h(state);
  }

  async connect() {
    this.record("connect");
  }

  /** What each verb this stand-in serves does; any other is refused with `badRequest`. */
  private verbs: { [K in Verb]?: (request: VerbRequest<K>) => Promise<ReplyOf[K]> } = {
    listDir: async (request) => {
      this.record("listDir", request.path ?? null);
      const [host, asked] = splitFolder(request.path ?? "/home/me");
      const entries = this.folders[folderOn(host, asked)];
      if (!entries) throw new VerbError({ code: "badWorkdir", message: `${asked}: No such file or directory` });
      const parent = asked === "/" ? null : asked.replace(/\/[^/]+\/?$/, "") || "/";
      return {
        path: asked,
        parent,
        home: "/home/me",
        isRepo: false,
        entries: entries.map((e) => ({ name: e.replace(/\/.*$/, ""), isDir: e.includes("/"), isRepo: e.endsWith("/.git") })),
      };
    },
    prompt: async (request) => {
      const { type: _, ...fields } = request;
      this.record("prompt", fields);
      const worktree = request.sessionKey ? null : this.makeWorktree(request.workdir ?? "/", request.worktree?.name);
      const key = request.sessionKey ?? this.addSession(request.agent ?? "echo", worktree?.path ?? request.workdir ?? "/", request.prompt);
      const made = this.sessions.get(key);
      if (worktree && made) made.info.worktree = { name: worktree.name, path: worktree.path, branch: worktree.branch ?? "", base: worktree.base };
      const taskId = `t${this.next++}`;
      const s = this.sessions.get(key);
      if (s && s.current.phase !== "streaming") {
        this.emit(key, { phase: "streaming", taskId, prompt: request.prompt, text: "", startedAt: Date.now() });
      } else if (s) {
        this.emit(key, { queued: [...s.current.queued, { taskId, prompt: request.prompt, steer: false }] });
      }
      return { sessionKey: key, taskId };
    },
    listWorktrees: async () => {
      this.record("listWorktrees");
      return structuredClone(this.worktrees);
    },
    sessionDiff: async ({ sessionKey, from }) => {
      this.record("sessionDiff", sessionKey, from);
      if (!this.sessionDiffOf) throw new VerbError({ code: "badRequest", message: "this Weft keeps no checkpoints" });
      return structuredClone(this.sessionDiffOf(sessionKey, from));
    },
    restore: async (request) => {
      const { type: _, ...fields } = request;
      this.record("restore", fields);
      return { overwrites: null, undo: "u2", written: [], deleted: [], kept: [] };
    },
    revertHunk: async (request) => {
      const { type: _, ...fields } = request;
      this.record("revertHunk", fields);
      return { overwrites: null, undo: "u1", written: [request.path], deleted: [], kept: [] };
    },
    mergeSession: async (request) => {
      const { type: _, ...fields } = request;
      this.record("mergeSession", fields);
      const wt = this.sessions.get(request.sessionKey)?.info.worktree;
      if (!wt) throw new VerbError({ code: "badRequest", message: "the session runs in no worktree of Weft's" });
      return this.mergeOutcome ?? { base: wt.base, branch: wt.branch, commit: "0123456789abcdef", conflicts: [], checks: [] };
    },
    stop: async ({ sessionKey }) => {
      this.record("stop", sessionKey);
      this.emit(sessionKey, { phase: "done", incomplete: true, notices: ["stopped"] });
      return null;
    },
    dequeue: async ({ sessionKey, taskId }) => {
      this.record("dequeue", sessionKey, taskId);
      const s = this.sessions.get(sessionKey);
      if (s) this.emit(sessionKey, { queued: s.current.queued.filter((q) => q.taskId !== taskId) });
      return null;
    },
    requeue: async ({ sessionKey, taskId, to }) => {
      this.record("requeue", sessionKey, taskId, to);
      const s = this.sessions.get(sessionKey);
      const q = s?.current.queued.find((x) => x.taskId === taskId);
      if (!s || !q) return null;
      const rest = s.current.queued.filter((x) => x.taskId !== taskId);
      rest.splice(Math.min(to - 1, rest.length), 0, q);
      this.emit(sessionKey, { queued: rest });
      return null;
    },
    steer: async ({ sessionKey, text, attachments }) => {
      this.record("steer", sessionKey, text, attachments ?? []);
      return this.steerOutcome;
    },
    interact: async (request) => {
      const { type: _, ...fields } = request;
      this.record("interact", fields);
      const s = this.sessions.get(request.sessionKey);
      if (s) {
        this.emit(request.sessionKey, {
          interactions: s.current.interactions.filter((i) => i.promptId !== request.promptId),
        });
      }
      return null;
    },
    inbox: async () => {
      this.record("inbox");
      const now = Date.now();
      return [...this.sessions.entries()].flatMap(([sessionKey, s]) =>
        s.current.interactions.map((i) => ({
          promptId: i.promptId,
          sessionKey,
          kind: i.kind,
          title: i.title,
          detail: i.detail,
          toolName: i.toolName,
          questions: i.questions,
          createdAt: now,
          expiresAt: null,
        })),
      );
    },
    getSnapshot: async ({ sessionKey }) => {
      this.record("getSnapshot", sessionKey);
      const s = this.sessions.get(sessionKey);
      if (!s) throw { code: "unknownSession", message: `unknown session \`${sessionKey}\`` };
      return { sessionKey, seq: s.seq, snapshot: structuredClone(s.current) };
    },
    getHistory: async ({ sessionKey, limit }) => {
      this.record("getHistory", sessionKey, limit);
      const all = this.sessions.get(sessionKey)?.history ?? [];
      return structuredClone(limit === null ? all : all.slice(Math.max(0, all.length - limit)));
    },
    earlierTurns: async ({ sessionKey, start, limit: asked }) => {
      this.record("earlierTurns", sessionKey, start, asked);
      const limit = asked ?? 50;
      const all = this.earlier.get(sessionKey);
      if (!all) throw { code: "unknownSession", message: `unknown session \`${sessionKey}\`` };
      const from = Math.min(start ?? Math.max(0, all.length - limit), all.length);
      return { sessionKey, total: all.length, start: from, turns: structuredClone(all.slice(from, from + limit)), sourceGone: false };
    },
    listSessions: async ({ workdir, archived }) => {
      this.record("listSessions", workdir, archived);
      return [...this.sessions.values()]
        .map((s) => ({ ...s.info }))
        .filter((s) => (workdir === null || s.workdir === workdir) && (archived || !s.archived))
        .reverse()
        .sort((a, b) => Number(b.pinned) - Number(a.pinned));
    },
    manageSession: async ({ sessionKey, action }) => {
      this.record("manageSession", sessionKey, action);
      const s = this.sessions.get(sessionKey);
      if (!s) throw { code: "unknownSession", message: `unknown session \`${sessionKey}\`` };
      if (action.type === "pin" || action.type === "unpin") s.info.pinned = action.type === "pin";
      else if (action.type === "archive" || action.type === "unarchive") s.info.archived = action.type === "archive";
      else if (action.type === "rename") s.info.title = action.title;
      else this.sessions.delete(sessionKey);
      return null;
    },
    search: async ({ query, limit }) => {
      this.record("search", query);
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      if (!words.length) return [];
      const hits = [];
      for (const [sessionKey, s] of this.sessions) {
        for (const turn of s.history) {
          const text = `${turn.prompt}\n${turn.text}`;
          if (!words.every((w) => text.toLowerCase().includes(w))) continue;
          const at = text.toLowerCase().indexOf(words[0]);
          const snippet = `${text.slice(0, at)}«${text.slice(at, at + words[0].length)}»${text.slice(at + words[0].length)}`;
          hits.push({ sessionKey, taskId: turn.taskId ?? "", snippet });
        }
      }
      return hits.slice(0, limit ?? 50);
    },
    listAgentInfo: async () => {
      const caps = { steer: true, interact: true, resume: true, tui: false };
      const facts = { accounts: false, accountKinds: [], packs: [], undo: false, attachments: false, forkAtTurn: false };
      return [
        { id: "echo", name: "Echo", installed: true, version: "1", capabilities: caps, problem: null, facts },
        {
          id: "claude", name: "Claude Code", installed: false, version: null, capabilities: caps, problem: "not installed",
          facts: { ...facts, accounts: true, attachments: true, forkAtTurn: true },
        },
        {
          id: "native", name: "Weft agent (native)", installed: true, version: null, capabilities: caps, problem: null,
          facts: { ...facts, accounts: true, packs: ["coding", "notes", "data"], undo: true, attachments: true },
        },
      ];
    },
    listModels: async ({ agent }) =>
      agent === "echo"
        ? [{ id: "echo-1", label: "Echo 1", default: true }, { id: "echo-2", label: "Echo 2", default: false }]
        : [],
    listEffort: async ({ agent, model }) => (agent === "echo" ? (model === "echo-2" ? ["low"] : ["low", "high"]) : []),
    listTools: async () => [],
    prewarm: async (request) => {
      this.record("prewarm", structuredClone(request));
      return { pid: null, reason: "the fake daemon keeps no processes" };
    },
    listSkills: async () => [],
    getWorkspaceTrust: async ({ workdir }) => {
      this.record("getWorkspaceTrust", workdir);
      return structuredClone(this.trustOf(workdir));
    },
    trustWorkspace: async ({ workdir, hash }) => {
      this.record("trustWorkspace", workdir, hash);
      return this.decide(workdir, hash, { trusted: true, declined: false });
    },
    declineWorkspaceTrust: async ({ workdir, hash }) => {
      this.record("declineWorkspaceTrust", workdir, hash);
      return this.decide(workdir, hash, { trusted: false, declined: true });
    },
    listWorkspaceFiles: async ({ workspace, query, limit }) => {
      this.record("listWorkspaceFiles", workspace, query);
      const q = query.toLowerCase();
      return this.files
        .filter((f) => f.path.toLowerCase().includes(q))
        .sort((a, b) => a.path.length - b.path.length)
        .slice(0, limit ?? 50);
    },
  };

  /** Any verb: answered by its behaviour above, or refused with `badRequest`. */
  async request<R extends ClientRequest>(request: R): Promise<Reply<R>> {
    const answer = this.verbs[request.type] as ((request: R) => Promise<Reply<R>>) | undefined;
    if (!answer) throw new VerbError({ code: "badRequest", message: `unexpected ${request.type}` });
    return answer(request);
  }

  /** Gives `workdir` these grants (untrusted, undecided), as if its files were edited. */
  grantsOf(workdir: string, grants: TrustGrant[]) {
    const hash = `h${this.next++}`;
    this.trust.set(workdir, { trusted: grants.length === 0, grants, hash, workdir, scope: workdir, declined: false });
  }

  private trustOf(workdir: string): WorkspaceTrust {
    return this.trust.get(workdir) ?? { trusted: true, grants: [], hash: "none", workdir, scope: workdir, declined: false };
  }

  /** As the daemon: refused with `needsConfirmation` when the grants changed since `hash` was shown. */
  private decide(workdir: string, hash: string, change: Partial<WorkspaceTrust>) {
    const now = this.trustOf(workdir);
    if (now.hash !== hash) throw new VerbError({ code: "needsConfirmation", message: `${workdir} changed since it was shown` });
    const next = { ...now, ...change };
    this.trust.set(workdir, next);
    return structuredClone(next);
  }

  async appInfo(): Promise<AppInfo> {
    return { version: "0.0.0", stateDir: "/tmp/weft", logPath: "/tmp/weft/logs/weft.log", initialWorkspace: this.initialWorkspace };
  }
  async recentWorkspaces() {
    return [...this.recents];
  }
  async addRecentWorkspace(path: string) {
    this.recents = [path, ...this.recents.filter((p) => p !== path)].slice(0, 10);
    return [...this.recents];
  }
  async removeRecentWorkspace(path: string) {
    this.record("removeRecentWorkspace", path);
    this.recents = this.recents.filter((p) => p !== path);
    return [...this.recents];
  }
  // A surface with a folder dialog and a log (the desktop window); a test deletes them
  // to stand for a browser.
  listHosts: Transport["listHosts"] = async () => [...this.hostList];
  addHost: Transport["addHost"] = async (name, destination) => {
    this.record("addHost", name, destination);
    if (this.hostList.some((h) => h.name === name)) throw new VerbError({ code: "badRequest", message: `a host named "${name}" is already there` });
    this.hostList = [...this.hostList, { name, destination, home: "/home/me", connected: true, error: null }];
    return [...this.hostList];
  };
  removeHost: Transport["removeHost"] = async (name) => {
    this.record("removeHost", name);
    this.hostList = this.hostList.filter((h) => h.name !== name);
    return [...this.hostList];
  };
  hostsStatus: Transport["hostsStatus"] = async () => [
    { name: "local", destination: "", reachable: true, version: "0.1.0", sessions: this.sessions.size, running: 0, questions: 0, agents: [], idleExitSecs: 600 },
    ...this.hostList.map((h): HostStatus => ({ name: h.name, destination: h.destination, reachable: h.connected, version: "0.1.0", sessions: 0, running: 0, questions: 0, agents: [], idleExitSecs: 600 })),
  ];
  /** The host ports forwarded here, as `weft hosts forward --list` lists them. */
  forwards: HostForward[] = [];
  hostForwards: Transport["hostForwards"] = async () => [...this.forwards];
  forwardHostPort: Transport["forwardHostPort"] = async (name, port, cancel) => {
    this.record("forwardHostPort", name, port, cancel);
    const [remote, local = remote] = port.split(":").map(Number);
    if (cancel) this.forwards = this.forwards.filter((f) => !(f.host === name && f.port === remote));
    else this.forwards = [...this.forwards, { host: name, port: remote, local, listening: true }];
    return [...this.forwards];
  };
  pickWorkspace: Transport["pickWorkspace"] = async () => {
    this.record("pickWorkspace");
    return "/work/picked";
  };
  openLog: Transport["openLog"] = async () => {
    this.record("openLog");
  };
  openUrl: Transport["openUrl"] = async (url) => {
    this.record("openUrl", url);
  };
  openPath: Transport["openPath"] = async (path, workdir, reveal) => {
    this.record("openPath", path, workdir, reveal);
  };
  saveRemoteFile: Transport["saveRemoteFile"] = async (path, workdir) => {
    this.record("saveRemoteFile", path, workdir);
    return `/home/me/Downloads/${path.split("/").at(-1)}`;
  };
  async onPatch(handler: (e: PatchEvent) => void) {
    this.patchHandlers.push(handler);
    return () => {
      this.patchHandlers = this.patchHandlers.filter((h) => h !== handler);
    };
  }
  async onResync(handler: (sessionKey: string | null) => void) {
    this.resyncHandlers.push(handler);
    return () => {
      this.resyncHandlers = this.resyncHandlers.filter((h) => h !== handler);
    };
  }
  async onLinkState(handler: (state: LinkState) => void) {
    this.linkHandlers.push(handler);
    return () => {
      this.linkHandlers = this.linkHandlers.filter((h) => h !== handler);
    };
  }
}
