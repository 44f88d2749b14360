// What the UI needs from the kernel: its verbs (one method each, the wire request of the
// same name in crates/protocol), the window's own few (workspaces, log), and the pushed
// patches. `WeftClient` (client/client.ts) implements it over any link to the daemon;
// `FakeTransport` is an in-memory stand-in for tests.
import type {
  AgentInfo,
  ClientRequest,
  ExportFormat,
  InboxItem,
  InteractRequest,
  ModelInfo,
  PatchEvent,
  PromptAccepted,
  PromptRequest,
  ReplyOf,
  SearchHit,
  SessionInfo,
  SkillInfo,
  SnapshotAt,
  SteerOutcome,
  ToolInfo,
  TranscriptPage,
  UniversalSnapshot,
  WireError,
  WorkspaceEntry,
  WorkspaceTrust,
} from "../generated";

/** The reply to request `R`: the type crates/protocol/src/verbs.rs pairs with its `type`. */
export type Reply<R extends ClientRequest> = ReplyOf[R["type"]];

/** Sends one request; its reply is typed by the request's `type`. */
export type Requester = <R extends ClientRequest>(request: R) => Promise<Reply<R>>;

/** What the surface tells the UI about itself. */
export interface AppInfo {
  version: string;
  stateDir: string;
  /** The log file, when this surface can show it. */
  logPath: string | null;
  /** Workspace chosen on the command line, by WEFT_WORKSPACE or the page's address. */
  initialWorkspace: string | null;
}

/** The link to the kernel as the window sees it. */
export type LinkState =
  | { state: "connected" }
  /** The daemon went away or the connection dropped; `reconnecting` when it is retried. */
  | { state: "disconnected"; reason: string; reconnecting: boolean };

export interface Transport {
  /** Connects (once, before any verb) and subscribes to every session's patches. */
  connect(): Promise<void>;

  prompt(request: PromptRequest): Promise<PromptAccepted>;
  stop(sessionKey: string): Promise<void>;
  steer(sessionKey: string, text: string): Promise<SteerOutcome>;
  interact(request: InteractRequest): Promise<void>;
  /** Takes a queued prompt out of the session's queue: it never runs. */
  dequeue(sessionKey: string, taskId: string): Promise<void>;
  /** Moves a queued prompt to position `to` (1 runs next). */
  requeue(sessionKey: string, taskId: string, to: number): Promise<void>;
  /** Every pending question, permission and confirmation across sessions, oldest first. */
  inbox(): Promise<InboxItem[]>;
  getSnapshot(sessionKey: string): Promise<SnapshotAt>;
  getHistory(sessionKey: string): Promise<UniversalSnapshot[]>;
  listSessions(workdir: string | null): Promise<SessionInfo[]>;
  /** Past turns whose prompt or reply contain every word (the last as a prefix). */
  search(query: string, limit?: number): Promise<SearchHit[]>;
  listAgentInfo(): Promise<AgentInfo[]>;
  listModels(agent: string): Promise<ModelInfo[]>;
  listEffort(agent: string): Promise<string[]>;
  listTools(): Promise<ToolInfo[]>;
  listSkills(workdir: string | null): Promise<SkillInfo[]>;
  /** The workspace's files matching `query` (what follows `@`), best first. */
  listWorkspaceFiles(workspace: string, query: string, limit?: number): Promise<WorkspaceEntry[]>;
  /** What a workspace's `.weft/` and the agents' project files grant, and whether the user trusted it. */
  getWorkspaceTrust(workdir: string): Promise<WorkspaceTrust>;
  /** Trusts the grants the user was shown (`hash`); refused with `needsConfirmation` when they changed since. */
  trustWorkspace(workdir: string, hash: string): Promise<WorkspaceTrust>;
  /** Says no to the grants shown (`hash`): the folder runs without them, and is not asked about again until they change. */
  declineWorkspaceTrust(workdir: string, hash: string): Promise<WorkspaceTrust>;

  appInfo(): Promise<AppInfo>;
  recentWorkspaces(): Promise<string[]>;
  /** Remembers `path` as the most recent workspace; returns the new list. */
  addRecentWorkspace(path: string): Promise<string[]>;
  /** Forgets a recent workspace (the folder and its sessions stay); returns the new list. */
  removeRecentWorkspace(path: string): Promise<string[]>;
  /** Asks the user for a folder with a dialog (null when cancelled); absent where there is no dialog (a browser). */
  pickWorkspace?: () => Promise<string | null>;
  /** Opens the log file; absent where the surface cannot. */
  openLog?: () => Promise<void>;
  /** Opens an http, https or mailto link outside the window (the system browser). */
  openUrl?: (url: string) => Promise<void>;
  /**
   * Opens a file an agent named (relative to `workdir` unless absolute) in the user's
   * editor or the desktop's handler, or shows it in the file manager (`reveal`); absent
   * where the surface cannot (a browser).
   */
  openPath?: (path: string, workdir: string | null, reveal: boolean) => Promise<void>;
  /** Keeps the window's size for the next window; absent where the page is not a window of its own. */
  saveWindowSize?: () => Promise<void>;
  /**
   * Fetches a remote https image the user asked to see, as a `data:` URL: the desktop
   * window's CSP lets the page load no remote image itself. Absent in a browser.
   */
  fetchImage?: (url: string) => Promise<string>;
  /**
   * Saves a session's export where the user picks in a save dialog; resolves to the path
   * written (null when cancelled). Absent where there is no dialog (a browser downloads).
   */
  saveExport?: (sessionKey: string, format: ExportFormat) => Promise<string | null>;

  /**
   * The turns of the session's agent file from before its first turn in Weft (an adopted
   * session's past, a fork's inherited turns): the last `limit` before `start`'s end, or
   * from `start`. Absent where the surface has no library.
   */
  earlierTurns?(sessionKey: string, start: number | null, limit: number): Promise<TranscriptPage>;
  /** Any verb by its wire request (the accounts view's); absent where the surface has none. */
  request?: Requester;

  /** Every session's patches, in order per session. Returns an unsubscribe function. */
  onPatch(handler: (event: PatchEvent) => void): Promise<() => void>;
  /**
   * Patches were dropped (the connection lagged, or it was re-made): re-read the
   * snapshot of `sessionKey`, or of every open session when it is null.
   */
  onResync(handler: (sessionKey: string | null) => void): Promise<() => void>;
  /** The connection went down or came back. */
  onLinkState(handler: (state: LinkState) => void): Promise<() => void>;
}

/** A verb's failure as the UI sees it: the wire code to branch on, and a sentence. */
export class VerbError extends Error {
  readonly code: WireError["code"] | "internal";
  /** It failed because the link to the kernel is down (the connection banner says so). */
  readonly offline: boolean;
  constructor(error: unknown, offline = error instanceof VerbError && error.offline) {
    const wire = asWireError(error);
    super(wire.message);
    this.code = wire.code;
    this.offline = offline;
  }
}

export function asWireError(error: unknown): WireError {
  if (error && typeof error === "object" && "code" in error && "message" in error) {
    return { code: (error as WireError).code, message: String((error as WireError).message) };
  }
  return { code: "internal", message: error instanceof Error ? error.message : String(error) };
}
