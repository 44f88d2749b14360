// The window's state: workspaces, the session list, open sessions, the composer's
// choices. Components read it; only its methods call the transport.
import type {
  AgentInfo,
  InboxItem,
  ModelInfo,
  PatchEvent,
  PrewarmRequest,
  PromptRequest,
  Restored,
  RestoreSide,
  SearchHit,
  SessionInfo,
  UniversalSnapshot,
} from "../generated";
import { AccountsStore } from "./accounts.svelte";
import { ChoiceMemory } from "./choices";
import { agentOfKey } from "./hosts.svelte";
import { classifyHref } from "./links";
import { SeenMarks } from "./seen.svelte";
import { SessionView } from "./session-view.svelte";
import type { TerminalClient } from "./terminal/client";
import { formatAddress, type Address, type Place } from "./places";
import { asWireError, VerbError, type AppInfo, type LinkState, type Transport } from "./transport";
import { TrustStore } from "./trust.svelte";
import { workspaceGroups, WorktreeStore, type WorkspaceGroup } from "./worktrees.svelte";

export type Theme = "system" | "light" | "dark";
/** A session's state as the sidebar shows and filters it. */
export type SessionState = "waiting" | "running" | "failed" | "done" | "idle";
export const SESSION_STATES: SessionState[] = ["waiting", "running", "failed", "done", "idle"];
export type SendMode = "steer" | "queue";

const NEW_SESSION = null;
const HIDDEN_KEY = "weft.hiddenWorkspaces";
const WIDTH_KEY = "weft.sidebarWidth";
const FOLDED_KEY = "weft.foldedWorkspaces";
/**
 * How long a choice (an agent in a new session's composer, an opened session) holds
 * before its agent's process is started ahead: clicking through the sidebar starts none.
 */
export const WARM_DWELL_MS = 1200;
export const SIDEBAR_WIDTH = { min: 200, max: 560, default: 270 };

function clampWidth(px: number): number {
  return Number.isFinite(px) ? Math.round(Math.min(SIDEBAR_WIDTH.max, Math.max(SIDEBAR_WIDTH.min, px))) : SIDEBAR_WIDTH.default;
}

function readWidth(): number {
  const v = globalThis.localStorage?.getItem(WIDTH_KEY);
  return v ? clampWidth(Number(v)) : SIDEBAR_WIDTH.default;
}

function readList(key: string): string[] {
  try {
    const list: unknown = JSON.parse(globalThis.localStorage?.getItem(key) ?? "[]");
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === "string") : [];
  } catch {
    return [];
  }
}

export class AppStore {
  readonly transport: Transport;
  /** Agent terminals, where the surface has them. */
  readonly terminals: TerminalClient | null;
  info = $state<AppInfo | null>(null);
  /** The link to the kernel; a banner says when it is down. */
  link = $state<LinkState>({ state: "connected" });
  /** The workspace path field is shown (a surface with no folder dialog). */
  enteringWorkspace = $state(false);
  workspaces = $state<string[]>([]);
  /** Workspaces removed from the sidebar whose sessions would otherwise list them again. */
  hiddenWorkspaces = $state<string[]>(readList(HIDDEN_KEY));
  workspace = $state<string | null>(null);
  sessions = $state<SessionInfo[]>([]);
  /** The selected session; null is a new session in `workspace`. */
  selectedKey = $state<string | null>(NEW_SESSION);
  search = $state("");
  /** The sidebar's filters: one agent, one state (null: all). */
  filterAgent = $state<string | null>(null);
  filterState = $state<SessionState | null>(null);
  /** Workspaces folded to their head in the sidebar. */
  folded = $state<string[]>(readList(FOLDED_KEY));
  /** The sidebar's Archived section is unfolded (it starts folded in every window). */
  archivedOpen = $state(false);
  /** When the user last saw each session: the sidebar's unread marks. */
  private seen = new SeenMarks();
  /** Past turns matching the search box's words (transcript search), best first. */
  searchHits = $state<SearchHit[]>([]);
  private searchTimer: ReturnType<typeof setTimeout> | null = null;
  /** Settles the pending search's promise when a newer query replaces it. */
  private searchSettle: (() => void) | null = null;
  private searchGen = 0;
  agents = $state<AgentInfo[]>([]);
  agent = $state("echo");
  models = $state<ModelInfo[]>([]);
  model = $state<string | null>(null);
  efforts = $state<string[]>([]);
  effort = $state<string | null>(null);
  /** The accounts (records only); `account` is the one the composer picked: null keeps
   * the session's (a new session's is the agent's own login). */
  readonly accounts: AccountsStore;
  /** Each workspace's trust (what its files grant takes effect only once trusted). */
  readonly trust: TrustStore;
  /** The git worktrees Weft made for sessions. */
  readonly worktrees: WorktreeStore;
  /** The new session starts in a git worktree of its own (a branch `weft/<name>`). */
  newInWorktree = $state(false);
  account = $state<string | null>(null);
  /** The domain pack for a new session of an agent that takes one; null: its default. */
  pack = $state<string | null>(null);
  sendMode = $state<SendMode>("steer");
  /** A prompt to put into the composer (edit and re-send); the composer takes it. */
  editRequest = $state<{ text: string; at: number } | null>(null);
  theme = $state<Theme>("system");
  /** The sidebar's width in pixels (dragged, or arrows on its edge), kept across windows. */
  sidebarWidth = $state(readWidth());
  /** The last verb failure, shown as a banner. */
  error = $state<string | null>(null);
  /** Sessions with a question or permission waiting (from the patch stream). */
  needsAnswer = $state<Record<string, number>>({});
  /** Every question, permission and confirmation waiting, oldest first (the inbox). */
  inbox = $state.raw<InboxItem[]>([]);
  /** The view in the main area; the session view shows `selectedKey`. */
  place = $state<Place>({ view: "session" });
  /** The session shown beside the selected one (split view); null: none. */
  beside = $state<string | null>(null);
  private inboxTimer: ReturnType<typeof setTimeout> | null = null;
  views = new Map<string, SessionView>();
  /** The agent, model and effort last used per workspace. */
  readonly choices = new ChoiceMemory();
  /** Bumped when a view is made, so `selected` re-reads the map. */
  private viewsVersion = $state(0);
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private unlisten: (() => void)[] = [];

  constructor(transport: Transport, terminals: TerminalClient | null = null) {
    this.transport = transport;
    this.terminals = terminals;
    this.accounts = new AccountsStore(transport, terminals);
    this.trust = new TrustStore(transport);
    this.worktrees = new WorktreeStore(transport);
  }

  /** The window's address: where it is, as a fragment (`#/s/<key>`, `#/inbox`…). */
  get address(): string {
    return formatAddress({ place: this.place, session: this.selectedKey, beside: this.beside });
  }

  /** Goes to a place; a session view shows the session selected there. */
  go(place: Place) {
    this.place = place;
  }

  /** Goes where an address says (a reload, back/forward, a link, the tray). */
  visit(address: Address) {
    if (address.place.view === "session") {
      if (address.session) this.selectSession(address.session);
      else if (this.selectedKey !== NEW_SESSION) this.newSession();
      this.beside = address.session ? (address.beside ?? null) : null;
    }
    this.place = address.place;
  }

  /** Shows `key` beside the selected session (null closes the second pane). */
  showBeside(key: string | null) {
    this.beside = key && key !== this.selectedKey ? key : null;
    if (this.beside) this.view(this.beside);
    this.place = { view: "session" };
  }

  /** Goes to the session of the oldest question waiting (its dialog asks there). */
  answerOldest() {
    const oldest = this.inbox[0];
    if (oldest) this.selectSession(oldest.sessionKey);
  }

  /** Moves a session to another agent from its next turn (refused while a turn runs). */
  async switchAgent(sessionKey: string, agent: string) {
    await this.guard(() => this.transport.request({ type: "switchAgent", sessionKey, agent }));
  }

  /** How many questions wait across every session. */
  get inboxCount(): number {
    return this.inbox.length;
  }

  get selected(): SessionView | null {
    void this.viewsVersion;
    return this.selectedKey ? (this.views.get(this.selectedKey) ?? null) : null;
  }

  /** Sessions matching the search box and the filters, newest first. */
  /** The sessions the sidebar's workspaces list: not the archived ones, filtered. */
  get filteredSessions(): SessionInfo[] {
    return this.filtered(this.sessions.filter((s) => !s.archived));
  }

  /** The archived sessions, filtered: the sidebar's Archived section. */
  get archivedSessions(): SessionInfo[] {
    return this.filtered(this.sessions.filter((s) => s.archived));
  }

  private filtered(sessions: SessionInfo[]): SessionInfo[] {
    const q = this.search.trim().toLowerCase();
    const agent = this.filterAgent;
    const state = this.filterState;
    if (!q && !agent && !state) return sessions;
    return sessions.filter(
      (s) =>
        (!agent || s.agent === agent) &&
        (!state || this.sessionState(s) === state) &&
        (!q || [s.title, s.agent, s.workdir, s.model ?? ""].some((f) => f.toLowerCase().includes(q))),
    );
  }

  /** Whether any sidebar filter (not the search) is on. */
  get filtering(): boolean {
    return this.filterAgent !== null || this.filterState !== null;
  }

  /** Waiting for the user, running, failed (its last turn ended in an error), done, or idle. */
  sessionState(s: SessionInfo): SessionState {
    if (this.needsAnswer[s.sessionKey]) return "waiting";
    if (s.phase === "streaming" || s.phase === "queued") return "running";
    if (this.peekView(s.sessionKey)?.current.error) return "failed";
    return s.phase === "done" ? "done" : "idle";
  }

  /** The session changed since the user last looked at it. */
  unread(s: SessionInfo): boolean {
    if (s.sessionKey === this.selectedKey) return false;
    return this.seen.unread(s.sessionKey, s.updatedAt);
  }

  /**
   * Pins or archives a session (or takes that back): its record in the session
   * library, so `weft sessions` and every window show the same.
   */
  async mark(key: string, action: "pin" | "unpin" | "archive" | "unarchive") {
    const done = await this.guard(async () => {
      await this.transport.request({ type: "manageSession", sessionKey: key, action: { type: action } });
      return true;
    });
    if (done) await this.refreshSessions();
  }

  /** Folds or unfolds a workspace in the sidebar. */
  setFolded(workdir: string, fold: boolean) {
    const list = this.folded.filter((w) => w !== workdir);
    this.folded = fold ? [...list, workdir] : list;
    localStorage.setItem(FOLDED_KEY, JSON.stringify(this.folded));
  }

  /** Workspaces to show, each with its sessions and worktrees (see `workspaceGroups`). */
  get workspaceGroups(): WorkspaceGroup[] {
    return workspaceGroups({
      all: this.sessions,
      shown: this.filteredSessions,
      workspaces: this.workspaces,
      hidden: this.hiddenWorkspaces,
      searching: this.search.trim() !== "",
      worktrees: this.worktrees,
    });
  }

  /**
   * The search box changed: titles filter at once; transcripts are searched once the
   * typing pauses (`delayMs`), and only the latest query's answer is kept.
   */
  searchChanged(delayMs = 200): Promise<void> {
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchSettle?.();
    this.searchSettle = null;
    const query = this.search.trim();
    const gen = ++this.searchGen;
    if (query.length < 2) {
      this.searchHits = [];
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.searchSettle = resolve;
      this.searchTimer = setTimeout(async () => {
        this.searchTimer = null;
        const hits = await this.guard(() => this.transport.request({ type: "search", query, limit: 30 }));
        if (gen === this.searchGen && hits) this.searchHits = hits;
        resolve();
      }, delayMs);
    });
  }

  /** Resolves once the agent list (and the chosen agent's models) is in. */
  agentsReady: Promise<void> = Promise.resolve();

  /**
   * Loads what the window needs to be usable; the agent list (which may run each
   * agent's binary for its version) arrives in the background (`agentsReady`).
   */
  async start(): Promise<void> {
    this.theme = (localStorage.getItem("weft.theme") as Theme | null) ?? "system";
    this.unlisten.push(await this.transport.onPatch((e) => this.onPatch(e)));
    this.unlisten.push(await this.transport.onResync((key) => this.resync(key)));
    this.unlisten.push(await this.transport.onLinkState((state) => (this.link = state)));
    await this.transport.connect();
    performance.mark("weft:connected");
    this.agentsReady = this.loadAgents();
    void this.refreshInbox();
    void this.accounts.refresh();
    // The session list does not wait for the shell's answers (each a round trip).
    const sessions = this.refreshSessions();
    const [info, recents] = await Promise.all([this.transport.appInfo(), this.transport.recentWorkspaces()]);
    this.info = info;
    this.workspaces = recents;
    if (info.initialWorkspace) await this.openWorkspace(info.initialWorkspace);
    else this.workspace = recents[0] ?? null;
    await sessions;
  }

  private async loadAgents() {
    const agents = await this.guard(() => this.transport.request({ type: "listAgentInfo" }));
    if (!agents) return;
    this.agents = agents;
    // A new session in a workspace starts with what was last used there.
    const remembered = this.selectedKey === NEW_SESSION ? this.choices.get(this.workspace) : null;
    const wanted = remembered?.agent ?? this.agent;
    const usable = agents.find((a) => a.id === wanted && a.installed) ?? agents.find((a) => a.id === this.agent) ?? agents.find((a) => a.installed);
    if (usable) await this.chooseAgent(usable.id, usable.id === remembered?.agent ? remembered : null);
  }

  /** The choices last used in `workdir`, for a new session there (once the agents are known). */
  private applyRemembered(workdir: string | null) {
    const c = this.choices.get(workdir);
    if (!c || this.agents.length === 0) return;
    if (!this.agents.some((a) => a.id === c.agent && a.installed)) return;
    void this.chooseAgent(c.agent, c);
  }

  stop() {
    for (const u of this.unlisten) u();
    this.unlisten = [];
  }

  private guard = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    try {
      const out = await work();
      return out;
    } catch (error) {
      // A verb lost with the link is the connection banner's to tell, not one more.
      if (!(error instanceof VerbError && error.offline)) this.error = asWireError(error).message;
      return undefined;
    }
  };

  onPatch(event: PatchEvent) {
    const view = this.views.get(event.sessionKey);
    if (view) view.receive(event);
    if (event.patch.interactions) {
      this.needsAnswer = { ...this.needsAnswer, [event.sessionKey]: event.patch.interactions.length };
      this.scheduleInbox();
    }
    const listed = this.sessions.find((s) => s.sessionKey === event.sessionKey);
    if (listed) {
      if (event.patch.phase) listed.phase = event.patch.phase;
      if (event.patch.updatedAt) listed.updatedAt = event.patch.updatedAt;
      if (event.sessionKey === this.selectedKey) this.seen.later(listed.sessionKey, listed.updatedAt);
    } else {
      this.scheduleRefresh();
    }
    if (event.patch.phase === "done") this.scheduleRefresh();
  }

  private scheduleRefresh() {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.refreshSessions();
    }, 150);
  }

  private scheduleInbox() {
    if (this.inboxTimer) return;
    this.inboxTimer = setTimeout(() => {
      this.inboxTimer = null;
      void this.refreshInbox();
    }, 100);
  }

  async refreshSessions() {
    const sessions = await this.guard(() => this.transport.request({ type: "listSessions", workdir: null, archived: true }));
    if (!sessions) return;
    this.sessions = sessions;
    void this.worktrees.refresh(sessions);
    this.seen.baselineFrom(sessions);
  }

  /** Re-reads the snapshot of `key` (every open one when null), the list and the inbox. */
  resync(key: string | null = null) {
    for (const view of this.views.values()) if (key === null || view.key === key) void view.resync();
    void this.refreshSessions();
    void this.refreshInbox();
  }

  /** Which sessions wait for an answer, from the daemon's inbox (patches keep it current). */
  async refreshInbox() {
    const items = await this.guard(() => this.transport.request({ type: "inbox" }));
    if (!items) return;
    this.inbox = [...items].sort((a, b) => a.createdAt - b.createdAt);
    this.needsAnswer = countBySession(items);
  }

  view(key: string): SessionView {
    let view = this.views.get(key);
    if (!view) {
      view = new SessionView(key, this.transport);
      this.views.set(key, view);
      this.viewsVersion += 1;
      void view.load();
    }
    return view;
  }

  /** The open view of `key`, if there is one (reactive: a view made later shows). */
  peekView(key: string): SessionView | null {
    void this.viewsVersion;
    return this.views.get(key) ?? null;
  }

  selectSession(key: string | null) {
    this.seen.flush();
    this.selectedKey = key;
    const listed = key ? this.sessions.find((s) => s.sessionKey === key) : undefined;
    if (listed) this.seen.mark(listed.sessionKey, listed.updatedAt);
    this.place = { view: "session" };
    if (this.beside === key) this.beside = null;
    if (key) {
      const view = this.view(key);
      const info = this.sessions.find((s) => s.sessionKey === key);
      if (info && info.workdir !== this.workspace) this.workspace = info.workdir;
      const agent = info?.agent ?? view.current.agent;
      if (agent && agent !== this.agent) void this.chooseAgent(agent);
      if (!view.running) this.warmSoon({ sessionKey: key });
    }
  }

  private warmTimer: ReturnType<typeof setTimeout> | null = null;

  /**
   * Asks the daemon to start the agent's process ahead of the prompt (its warm pool),
   * once the choice has held for a moment. Best effort: the daemon says no for an
   * untrusted folder, a busy session or a full pool, and the prompt works either way.
   */
  private warmSoon(request: Partial<PrewarmRequest>) {
    if (this.warmTimer) clearTimeout(this.warmTimer);
    const wanted: PrewarmRequest = { sessionKey: null, agent: null, workdir: null, model: null, effort: null, account: null, ...request };
    this.warmTimer = setTimeout(() => {
      this.warmTimer = null;
      // A new session bound for a new worktree has no folder yet to start a process in
      // (one started in the workspace itself would never fit it).
      const still = wanted.sessionKey
        ? this.selectedKey === wanted.sessionKey
        : this.selectedKey === NEW_SESSION && this.agent === wanted.agent && !this.newInWorktree;
      if (still) this.transport.request({ type: "prewarm", ...wanted }).catch(() => undefined);
    }, WARM_DWELL_MS);
  }

  /** Opens a search hit: its session, scrolled to the matching turn. */
  openHit(hit: SearchHit) {
    this.selectSession(hit.sessionKey);
    this.view(hit.sessionKey).focusTaskId = hit.taskId;
  }

  /** Moves the selection by `delta` through the visible session list. */
  cycleSession(delta: number) {
    const list = this.workspaceGroups.flatMap((g) => [...g.sessions, ...g.worktrees.flatMap((w) => w.sessions)]);
    if (list.length === 0) return;
    const at = list.findIndex((s) => s.sessionKey === this.selectedKey);
    const next = at < 0 ? 0 : (at + delta + list.length) % list.length;
    this.selectSession(list[next].sessionKey);
  }

  newSession(workdir: string | null = this.workspace) {
    this.workspace = workdir;
    this.selectedKey = NEW_SESSION;
    this.place = { view: "session" };
    this.beside = null;
    this.newInWorktree = this.worktrees.newInWorktree(workdir);
    this.applyRemembered(workdir);
  }

  async openWorkspace(path: string) {
    const recents = await this.guard(() => this.transport.addRecentWorkspace(path));
    if (recents) this.workspaces = recents;
    if (this.hiddenWorkspaces.includes(path)) this.setHidden(this.hiddenWorkspaces.filter((p) => p !== path));
    this.newSession(path);
  }

  /**
   * Takes a workspace off the sidebar: forgotten as recent, its sessions' group hidden
   * (they stay in the store, found by search; opening the folder again shows them).
   */
  async removeWorkspace(path: string) {
    const recents = await this.guard(() => this.transport.removeRecentWorkspace(path));
    if (!recents) return;
    this.workspaces = recents;
    if (!this.hiddenWorkspaces.includes(path)) this.setHidden([...this.hiddenWorkspaces, path]);
    if (this.workspace === path) {
      const selectedHere = this.selectedKey && this.sessions.find((s) => s.sessionKey === this.selectedKey)?.workdir === path;
      if (selectedHere || !this.selectedKey) this.newSession(recents[0] ?? null);
      else this.workspace = recents[0] ?? null;
    }
  }

  private setHidden(list: string[]) {
    this.hiddenWorkspaces = list;
    localStorage.setItem(HIDDEN_KEY, JSON.stringify(list));
  }

  /** Asks for a workspace folder: the folder dialog, or the path field where there is none. */
  async pickWorkspace() {
    const pick = this.transport.pickWorkspace;
    if (!pick) {
      this.enteringWorkspace = true;
      return;
    }
    const path = await this.guard(() => pick());
    if (path) await this.openWorkspace(path);
  }

  /** The path field's entry; false when it is not an absolute path. */
  async enterWorkspace(text: string): Promise<boolean> {
    const path = text.trim().replace(/(.)\/+$/, "$1");
    if (!path.startsWith("/")) {
      this.error = "A workspace is a folder's absolute path, like /home/me/project.";
      return false;
    }
    this.error = null;
    this.enteringWorkspace = false;
    await this.openWorkspace(path);
    return true;
  }

  /** Picks the agent for a new session; `prefer` names a model, effort and account to keep if offered. */
  async chooseAgent(
    id: string,
    prefer: { model: string | null; effort: string | null; account?: string | null } | null = null,
  ) {
    if (id !== this.agent) this.account = null;
    this.agent = id;
    const [models, efforts] = await Promise.all([
      this.guard(() => this.transport.request({ type: "listModels", agent: id })),
      this.guard(() => this.transport.request({ type: "listEffort", agent: id })),
    ]);
    if (this.agent !== id) return;
    this.models = models ?? [];
    this.efforts = efforts ?? [];
    const model = prefer?.model;
    this.model = model && this.models.some((m) => m.id === model) ? model : (this.models.find((m) => m.default)?.id ?? null);
    const effort = prefer?.effort;
    this.effort = effort && this.efforts.includes(effort) ? effort : null;
    // The account last used there, if it is still this agent's.
    const account = prefer?.account;
    if (account && this.accounts.forAgent(id).some((a) => a.id === account)) this.account = account;
    if (this.selectedKey === NEW_SESSION && this.workspace) {
      this.warmSoon({ agent: id, workdir: this.workspace, model: this.model, effort: this.effort, account: this.account });
    }
  }

  /** The efforts `model` of `agent` takes (the agent's whole list for its default model); an effort it does not take is dropped. */
  async refreshEfforts(agent: string, model: string | null) {
    // Best effort, asked as the composer mounts (a new window may not be connected yet):
    // the list offered stays as it was when it cannot be read.
    const efforts = await this.transport.request({ type: "listEffort", agent, ...(model ? { model } : {}) }).catch(() => null);
    if (this.agent !== agent || this.model !== model || !efforts) return;
    this.efforts = efforts;
    if (this.effort && !efforts.includes(this.effort)) this.effort = null;
  }

  /** The packs a new session of the chosen agent can start with, the default first (its facts). */
  get packs(): string[] {
    return this.agents.find((a) => a.id === this.agent)?.facts.packs ?? [];
  }

  /**
   * Whether the selected session's last turn can be undone: its files were checkpointed
   * around it (every agent), or its agent's facts say Weft applied its edits (native).
   */
  get canUndo(): boolean {
    const view = this.selected;
    if (view === null || view.running) return false;
    if (view.turns.at(-1)?.turnDiff) return true;
    const agent = agentOfKey(view.key);
    return this.agents.find((a) => a.id === agent)?.facts.undo ?? false;
  }

  /** Puts the selected session's files back as they were before its last turn. */
  async undo(): Promise<boolean> {
    const view = this.selected;
    if (!view || !this.canUndo) return false;
    const last = view.turns.at(-1)?.turnDiff;
    if (!last) return this.send("/undo");
    const restored = await this.restore(view, last.turn, "before", {});
    if (!restored) return false;
    if (restored.overwrites) {
      view.addNote(`Not undone: ${restored.overwrites.files.map((f) => f.path).join(", ")} changed since the last turn; restore from the turn's "files changed" to see and confirm.`);
      return false;
    }
    view.addNote(`Undone: ${restored.written.length + restored.deleted.length} file(s) put back as they were before turn ${last.turn}.`);
    return true;
  }

  /**
   * Restores a session's files to before or after one of its turns (or only `paths`),
   * from the checkpoints taken around every turn. The daemon holds back a restore that
   * would overwrite newer edits (`overwrites`) unless `yes`; `undo` takes the last
   * restore back. Null when it failed (the error shows).
   */
  async restore(
    view: SessionView,
    turn: number,
    side: RestoreSide,
    opts: { paths?: string[] | null; yes?: boolean; undo?: boolean },
  ): Promise<Restored | null> {
    this.error = null;
    const restored = await this.guard(() =>
      this.transport.request({
        type: "restore",
        sessionKey: view.key,
        turn,
        side,
        paths: opts.paths ?? null,
        yes: opts.yes ?? false,
        undo: opts.undo ?? false,
      }),
    );
    return restored ?? null;
  }

  /**
   * Sends the composer's text: a new session, a new turn, or, while a turn runs, a
   * steer or a queued prompt as `sendMode` says. Returns false when nothing was sent.
   */
  async send(text: string, attachments: string[] = []): Promise<boolean> {
    const prompt = text.trim();
    if (!prompt) return false;
    this.error = null;
    const view = this.selected;
    if (view && view.running && this.sendMode === "steer") {
      // The attachments go with the steer: into the turn, or with it as the next turn.
      const outcome = await this.guard(() =>
        this.transport.request({ type: "steer", sessionKey: view.key, text: prompt, attachments }),
      );
      if (!outcome) return false;
      const names = attachments.map((p) => p.split(/[\\/]/).pop() ?? p);
      const attached = names.length ? ` (attached: ${names.join(", ")})` : "";
      view.addNote(
        outcome === "injected"
          ? `Steered the running turn: “${prompt}”${attached}`
          : `The agent cannot take a steer mid-turn; queued: “${prompt}”${attached}`,
      );
      return true;
    }
    const accepted = await this.guard(() =>
      this.transport.request({
        type: "prompt",
        prompt,
        agent: view ? null : this.agent,
        sessionKey: view?.key ?? null,
        workdir: view ? null : this.workspace,
        model: this.model,
        effort: this.effort,
        attachments,
        account: this.account,
        pack: !view && this.packs.length > 0 ? this.pack : null,
        worktree: !view && this.newInWorktree ? { name: "auto" } : null,
      }),
    );
    if (!accepted) return false;
    if (!view) this.choices.set(this.workspace, { agent: this.agent, model: this.model, effort: this.effort, account: this.account });
    // The session records the account from now on; the picker shows it from there.
    if (this.account !== null) {
      this.account = null;
      void this.refreshSessions();
    }
    if (view && view.running) view.addNote(`Queued: “${prompt}”`, accepted.taskId);
    if (!view) {
      this.selectSession(accepted.sessionKey);
      void this.refreshSessions().then(() => this.worktrees.refresh(this.sessions, true));
    }
    return true;
  }

  /** Ends a session's terminal (its pane goes; its program is killed, its turn ends). */
  async closeTerminal(key: string) {
    this.views.get(key)?.terminalClosed();
    const terminals = this.terminals;
    if (terminals) await this.guard(() => terminals.close(key));
  }

  /**
   * Follows a link in agent output: http/https/mailto to the system browser, a file
   * (file:// or a path, relative to the session's folder) to the user's editor.
   */
  async openLink(href: string, workdir: string | null) {
    const target = classifyHref(href);
    if (!target) return;
    if (target.kind === "url") {
      const open = this.transport.openUrl;
      if (open) await this.guard(() => open(target.url));
    } else if (target.kind === "file") await this.openFile(target.path, workdir, false);
    else this.error = `Weft does not follow ${target.href.split(":")[0]}: links (only http, https and mailto).`;
  }

  /** Opens a file in the user's editor (or shows it in the file manager with `reveal`). */
  async openFile(path: string, workdir: string | null, reveal: boolean) {
    const open = this.transport.openPath;
    if (!open) {
      this.error = `This window cannot open files; the path is ${path}`;
      return;
    }
    await this.guard(() => open(path, workdir, reveal));
  }

  /**
   * "Copy to this machine": a host's file saved where the user picks (the shell's save
   * dialog); the path it went to, null when cancelled or failed (the error is shown).
   */
  async saveFile(path: string, workdir: string | null): Promise<string | null> {
    const save = this.transport.saveRemoteFile;
    if (!save) {
      this.error = `This window cannot copy files; the path is ${path}`;
      return null;
    }
    return (await this.guard(() => save(path, workdir))) ?? null;
  }

  /** Takes a queued prompt out of its session's queue: it never runs. */
  async dequeue(view: SessionView, taskId: string) {
    await this.guard(() => this.transport.request({ type: "dequeue", sessionKey: view.key, taskId }));
  }

  /** Moves a queued prompt to position `to` (1 runs next). */
  async requeue(view: SessionView, taskId: string, to: number) {
    await this.guard(() => this.transport.request({ type: "requeue", sessionKey: view.key, taskId, to }));
  }

  /** Puts a past prompt into the composer to edit and send as a new turn. */
  editPrompt(text: string) {
    this.editRequest = { text, at: Date.now() };
  }

  /** Runs a turn's prompt again as a new turn of its session (the old turn stays). */
  async retry(view: SessionView, turn: UniversalSnapshot): Promise<boolean> {
    this.error = null;
    const request = {
      prompt: turn.prompt,
      agent: null,
      sessionKey: view.key,
      workdir: null,
      model: turn.model,
      effort: turn.effort,
      attachments: [] as string[],
    } as PromptRequest;
    const accepted = await this.guard(() => this.transport.request({ type: "prompt", ...request }));
    if (!accepted) return false;
    if (view.running) view.addNote(`Queued: “${turn.prompt}”`, accepted.taskId);
    return true;
  }

  async stopSelected() {
    const view = this.selected;
    // A terminal's turn ends by closing the terminal (the kernel refuses a stop).
    if (view && view.running && !view.terminalOpen) await this.guard(() => this.transport.request({ type: "stop", sessionKey: view.key }));
  }

  async answer(
    view: SessionView,
    promptId: string,
    action: "select" | "text" | "skip" | "cancel",
    value: string | null,
    answers: Record<string, string> = {},
    several: { selected?: Record<string, string[]>; texts?: Record<string, string> } = {},
  ) {
    view.markAnswered(promptId);
    await this.guard(() =>
      this.transport.request({ type: "interact", sessionKey: view.key, promptId, action, value, answers, ...several }),
    );
  }

  setSidebarWidth(px: number) {
    this.sidebarWidth = clampWidth(px);
    localStorage.setItem(WIDTH_KEY, String(this.sidebarWidth));
  }

  setTheme(theme: Theme) {
    this.theme = theme;
    localStorage.setItem("weft.theme", theme);
  }
}

function countBySession(items: InboxItem[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item.sessionKey] = (counts[item.sessionKey] ?? 0) + 1;
  return counts;
}
