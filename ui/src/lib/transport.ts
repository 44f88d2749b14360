// What the UI needs from the kernel: its verbs (all through `request`: the wire request of
// crates/protocol, its reply typed by ReplyOf), the window's own few (workspaces, log),
// and the pushed patches. `WeftClient` (client/client.ts) implements it over any link to
// the daemon; `FakeTransport` is an in-memory stand-in for tests.
import type { ClientRequest, ExportFormat, PatchEvent, ReplyOf, WireError } from "../generated";
import type { HostForward, HostLink, HostStatus } from "./hosts.svelte";

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

/**
 * The window's own commands, which the surface around the UI (the desktop shell, a
 * browser page) answers and the daemon does not: the same on the Transport and on a
 * client's Shell (client/link.ts).
 */
export interface WindowCommands {
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
  /**
   * Copies a host's file (named as for `openPath`) to this machine where the user picks
   * in the shell's save dialog: the path it went to, null when cancelled. Absent where
   * the surface cannot (a browser).
   */
  saveRemoteFile?: (path: string, workdir: string | null) => Promise<string | null>;
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
   * Shows `n` questions waiting outside the window: the desktop tray icon's tooltip
   * ("Weft — 2 questions waiting"), its title where the platform shows one, and its menu.
   * Call it whenever the inbox changes (it is cheap when the count is unchanged). Absent
   * where there is no tray (a browser); a no-op where the desktop shows none.
   */
  setInboxCount?: (n: number) => Promise<void>;
  /**
   * Calls `handler` with an address of the app (a fragment: "#/inbox") when the surface
   * asks this window to go there — the tray's Open inbox, which also shows and focuses the
   * main window; set `location.hash` from it. Only the main window is asked. Resolves to
   * an unsubscribe function. Absent in a browser.
   */
  onNavigate?: (handler: (hash: string) => void) => Promise<() => void>;
  /**
   * Opens the app at `hash` (an address: "#/s/<key>", "#/" then printable ASCII without
   * spaces, at most 1024 characters; percent-encode the rest) in a window of its own —
   * a session popped out — or brings forward the pop-out already showing that address.
   * The new window is a client of the daemon like this one. Rejects with a VerbError
   * (code badRequest) for an address it refuses. Absent where the page cannot open
   * windows (a browser).
   */
  openWindow?: (hash: string) => Promise<void>;
  /** The hosts of the user's list with their links (the desktop shell's; hosts.svelte.ts). Absent in a browser. */
  listHosts?: () => Promise<HostLink[]>;
  /** Adds a host as `weft hosts add NAME DESTINATION` does; the new list. */
  addHost?: (name: string, destination: string) => Promise<HostLink[]>;
  /** Removes a host as `weft hosts remove NAME` does; the new list. */
  removeHost?: (name: string) => Promise<HostLink[]>;
  /** Every host's daemon, as `weft hosts status --json` reports it. */
  hostsStatus?: () => Promise<HostStatus[]>;
  /** The host ports forwarded to this machine (`weft hosts forward --list`). */
  hostForwards?: () => Promise<HostForward[]>;
  /** Forwards host `name`'s `port` (`PORT` or `PORT:LOCALPORT`) here, or with `cancel` stops that; the forwards after. */
  forwardHostPort?: (name: string, port: string, cancel: boolean) => Promise<HostForward[]>;
  /**
   * Sends `request` to host `host`'s daemon (`local`: this machine's): a view showing one
   * host's library, usage, agents or accounts asks verbs that name no session or folder.
   * The reply names that host's sessions and folders as the window does (`HOST/agent:id`).
   * Absent where there are no hosts (a browser).
   */
  requestOn?: <R extends ClientRequest>(host: string, request: R) => Promise<Reply<R>>;
}

export interface Transport extends WindowCommands {
  /** Connects (once, before any verb) and subscribes to every session's patches. */
  connect(): Promise<void>;

  /**
   * Any verb, by its wire request (ClientRequest); the reply is typed by the request's
   * `type` (ReplyOf). Rejects with a VerbError.
   */
  request: Requester;
  /**
   * True where the surface answers only the session verbs (the in-memory stand-in): the
   * views built on the others (library, accounts, attachments, MCP, skills) are not offered.
   */
  readonly sessionVerbsOnly?: boolean;

  appInfo(): Promise<AppInfo>;

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

/** What a view's store needs of the transport: its verbs (and a library's export). */
export type VerbsOf = Pick<Transport, "request" | "sessionVerbsOnly" | "saveExport">;

/** The transport's `request` for the views built on the wider verbs; null where it answers only the session verbs. */
export function wideRequester(transport: Pick<Transport, "request" | "sessionVerbsOnly">): Requester | null {
  return transport.sessionVerbsOnly ? null : (request) => transport.request(request);
}

/**
 * Sends `request` by `call` for a view's store: its reply, or null when it failed (its
 * sentence goes to `error`, which is cleared first) or there is no `call`.
 */
export async function requestOrNull<R extends ClientRequest>(
  call: Requester | null,
  request: R,
  error: (message: string | null) => void,
): Promise<Reply<R> | null> {
  if (!call) return null;
  try {
    error(null);
    return await call(request);
  } catch (e) {
    error(new VerbError(e).message);
    return null;
  }
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
