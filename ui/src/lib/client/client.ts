// The window's one client of the daemon, over any link: each verb is one wire request
// (ClientRequest, tagged by `type`); replies are matched to requests by id; an error
// reply becomes a VerbError; patches, resyncs and the daemon's closing go to whoever
// listens; terminal frames go to the pane attached to their session key. When a
// WebSocket link comes back after a drop, the client subscribes again, re-attaches the
// open panes and asks every view to re-read its snapshot.
import type {
  ClientMessage,
  ClientRequest,
  ExportFormat,
  PatchEvent,
  ServerMessage,
  Welcome,
} from "../../generated";
import type { FrameHandler, TerminalClient } from "../terminal/client";
import { decodeFrame, type Frame } from "../terminal/stream";
import { VerbError, type AppInfo, type LinkState, type Reply, type Transport } from "../transport";
import type { Link, LinkEvents, Shell } from "./link";

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: VerbError) => void;
}

/** Frames kept for a terminal that is being opened and whose key is not known yet. */
const UNCLAIMED_LIMIT = 256;

class Listeners<T> {
  private handlers = new Set<(value: T) => void>();
  add(handler: (value: T) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }
  emit(value: T) {
    for (const h of [...this.handlers]) h(value);
  }
}

export class WeftClient implements Transport, TerminalClient {
  /** The daemon's answer to this connection's hello (the latest, after a reconnect). */
  welcome: Welcome | null = null;
  readonly pickWorkspace?: () => Promise<string | null>;
  readonly openLog?: () => Promise<void>;
  readonly openUrl?: (url: string) => Promise<void>;
  readonly openPath?: (path: string, workdir: string | null, reveal: boolean) => Promise<void>;
  readonly saveRemoteFile?: (path: string, workdir: string | null) => Promise<string | null>;
  readonly saveWindowSize?: () => Promise<void>;
  readonly fetchImage?: (url: string) => Promise<string>;
  readonly saveExport?: (sessionKey: string, format: ExportFormat) => Promise<string | null>;
  readonly setInboxCount?: (n: number) => Promise<void>;
  readonly onNavigate?: (handler: (hash: string) => void) => Promise<() => void>;
  readonly openWindow?: (hash: string) => Promise<void>;
  readonly listHosts?: Transport["listHosts"];
  readonly addHost?: Transport["addHost"];
  readonly removeHost?: Transport["removeHost"];
  readonly hostsStatus?: Transport["hostsStatus"];
  readonly requestOn?: Transport["requestOn"];
  readonly hostForwards?: Transport["hostForwards"];
  readonly forwardHostPort?: Transport["forwardHostPort"];

  private nextId = 1;
  private pending = new Map<number, Pending>();
  private connecting: Promise<void> | null = null;
  private subscribed = false;
  /** Why the daemon said it is going away, for when the connection then drops. */
  private closingReason: string | null = null;
  private patches = new Listeners<PatchEvent>();
  private resyncs = new Listeners<string | null>();
  private states = new Listeners<LinkState>();
  /** The pane attached to each session's terminal. */
  private panes = new Map<string, FrameHandler>();
  /** Opens of a new session's terminal in flight: frames for keys no pane claims wait here. */
  private opening = 0;
  private unclaimed = new Map<string, Frame[]>();

  constructor(
    private readonly link: Link,
    private readonly shell: Shell,
  ) {
    if (shell.pickWorkspace) this.pickWorkspace = () => shell.pickWorkspace!();
    if (shell.openLog) this.openLog = () => shell.openLog!();
    if (shell.openUrl) this.openUrl = (url) => shell.openUrl!(url);
    if (shell.openPath) this.openPath = (path, workdir, reveal) => shell.openPath!(path, workdir, reveal);
    if (shell.saveRemoteFile) this.saveRemoteFile = (path, workdir) => shell.saveRemoteFile!(path, workdir);
    if (shell.saveWindowSize) this.saveWindowSize = () => shell.saveWindowSize!();
    if (shell.fetchImage) this.fetchImage = (url) => shell.fetchImage!(url);
    if (shell.saveExport) this.saveExport = (key, format) => shell.saveExport!(key, format);
    if (shell.setInboxCount) this.setInboxCount = (n) => shell.setInboxCount!(n);
    if (shell.onNavigate) this.onNavigate = (handler) => shell.onNavigate!(handler);
    if (shell.openWindow) this.openWindow = (hash) => shell.openWindow!(hash);
    if (shell.listHosts) this.listHosts = () => shell.listHosts!();
    if (shell.addHost) this.addHost = (name, destination) => shell.addHost!(name, destination);
    if (shell.removeHost) this.removeHost = (name) => shell.removeHost!(name);
    if (shell.hostsStatus) this.hostsStatus = () => shell.hostsStatus!();
    if (shell.requestOn) this.requestOn = (host, request) => shell.requestOn!(host, request);
    if (shell.hostForwards) this.hostForwards = () => shell.hostForwards!();
    if (shell.forwardHostPort) this.forwardHostPort = (name, port, cancel) => shell.forwardHostPort!(name, port, cancel);
  }

  connect(): Promise<void> {
    this.connecting ??= (async () => {
      const events: LinkEvents = {
        message: (m) => this.receive(m),
        frame: (bytes) => this.frame(bytes),
        down: (reason, reconnecting) => this.down(reason, reconnecting),
        up: (welcome) => void this.up(welcome),
      };
      this.welcome = await this.link.connect(events);
      if (!this.link.subscribesAll) await this.request({ type: "subscribeAll" });
      this.subscribed = true;
    })();
    return this.connecting;
  }

  /** Sends one request; resolves to its reply (typed by its `type`), rejects with a VerbError. */
  request<R extends ClientRequest>(request: R): Promise<Reply<R>> {
    const id = this.nextId++;
    return new Promise<Reply<R>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (r: unknown) => void, reject });
      try {
        this.link.send({ id, ...request } as ClientMessage);
      } catch (error) {
        this.pending.delete(id);
        reject(new VerbError(error));
      }
    });
  }

  private receive(message: ServerMessage) {
    switch (message.type) {
      case "reply":
      case "error": {
        if (message.type === "error" && message.id === 0) {
          // The daemon could not read which request this answers (ids start at 1): any
          // request in flight may be it, and one left waiting would hang its caller.
          const all = [...this.pending.values()];
          this.pending.clear();
          for (const p of all) p.reject(new VerbError(message.error));
          return;
        }
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        if (message.type === "reply") waiting.resolve(message.result);
        else waiting.reject(new VerbError(message.error));
        return;
      }
      case "patch": {
        // `from` too: a merged patch (the daemon merges for a client that fell behind)
        // without it reads as a gap, and every gap costs the session's whole history.
        const { sessionKey, seq, from, patch } = message;
        this.patches.emit(from === undefined || from === null ? { sessionKey, seq, patch } : { sessionKey, seq, from, patch });
        return;
      }
      case "resync":
        // After the desktop shell re-made its connection (a restarted daemon) it says
        // so with a resync of everything: the link is usable again.
        if (message.sessionKey === null) this.states.emit({ state: "connected" });
        this.resyncs.emit(message.sessionKey);
        return;
      case "closing":
        this.closingReason = message.reason;
        this.states.emit({ state: "disconnected", reason: message.reason, reconnecting: true });
        return;
    }
  }

  private frame(bytes: Uint8Array) {
    const keyed = decodeFrame(bytes);
    if (!keyed) return;
    const pane = this.panes.get(keyed.sessionKey);
    if (pane) {
      pane(keyed.frame);
    } else if (this.opening > 0) {
      const kept = this.unclaimed.get(keyed.sessionKey) ?? [];
      if (kept.length < UNCLAIMED_LIMIT) kept.push(keyed.frame);
      this.unclaimed.set(keyed.sessionKey, kept);
    }
  }

  private down(dropped: string, reconnecting: boolean) {
    const reason = this.closingReason ?? dropped;
    const lost = [...this.pending.values()];
    this.pending.clear();
    const error = new VerbError({ code: "internal", message: `The connection to Weft was lost (${reason}).` }, true);
    for (const p of lost) p.reject(error);
    this.states.emit({ state: "disconnected", reason, reconnecting });
  }

  private async up(welcome: Welcome) {
    this.welcome = welcome;
    this.closingReason = null;
    try {
      if (this.subscribed && !this.link.subscribesAll) await this.request({ type: "subscribeAll" });
    } catch {
      // Dropped again: the next `up` tries again.
      return;
    }
    // The daemon may have restarted: a terminal that is gone just stays quiet.
    for (const key of this.panes.keys()) {
      this.request({ type: "attachTerminal", sessionKey: key }).catch(() => {});
    }
    this.states.emit({ state: "connected" });
    this.resyncs.emit(null);
  }

  /** A verb answered by `null`: resolves to nothing, as the TerminalClient's methods say. */
  private done = async <R extends ClientRequest>(request: R): Promise<void> => {
    await this.request(request);
  };

  // The surface's own.
  appInfo = (): Promise<AppInfo> => this.shell.appInfo((request) => this.request(request));
  recentWorkspaces = () => this.shell.recentWorkspaces();
  addRecentWorkspace = (path: string) => this.shell.addRecentWorkspace(path);
  removeRecentWorkspace = (path: string) => this.shell.removeRecentWorkspace(path);

  onPatch = async (handler: (event: PatchEvent) => void) => this.patches.add(handler);
  onResync = async (handler: (sessionKey: string | null) => void) => this.resyncs.add(handler);
  onLinkState = async (handler: (state: LinkState) => void) => this.states.add(handler);

  // Terminals: frames for a session go to the pane attached to it. Attach, detach,
  // open and close of one session run one after another (the desktop shell handles
  // requests concurrently, so a detach and the next attach could otherwise swap).
  open(
    args: { sessionKey?: string; agent?: string; workdir?: string; cols: number; rows: number },
    onFrame: FrameHandler,
  ): Promise<{ sessionKey: string }> {
    const known = args.sessionKey;
    const run = async () => {
      if (known) this.panes.set(known, onFrame);
      else this.opening += 1;
      try {
        const attached = await this.request({
          type: "openTerminal",
          agent: args.agent ?? null,
          sessionKey: known ?? null,
          workdir: args.workdir ?? null,
          model: null,
          cols: args.cols,
          rows: args.rows,
        });
        this.claim(attached.sessionKey, onFrame);
        return { sessionKey: attached.sessionKey };
      } catch (error) {
        if (known && this.panes.get(known) === onFrame) this.panes.delete(known);
        throw error;
      } finally {
        if (!known && --this.opening === 0) this.unclaimed.clear();
      }
    };
    return known ? this.inTurn(known, run) : run();
  }

  attach(sessionKey: string, onFrame: FrameHandler): Promise<void> {
    return this.inTurn(sessionKey, async () => {
      this.panes.set(sessionKey, onFrame);
      await this.request({ type: "attachTerminal", sessionKey });
    });
  }

  detach(sessionKey: string): Promise<void> {
    return this.inTurn(sessionKey, async () => {
      this.panes.delete(sessionKey);
      await this.request({ type: "detachTerminal", sessionKey });
    });
  }

  write = (sessionKey: string, data: string) => this.done({ type: "writeTerminal", sessionKey, data });
  resize = (sessionKey: string, cols: number, rows: number) =>
    this.done({ type: "resizeTerminal", sessionKey, cols, rows });

  close(sessionKey: string): Promise<void> {
    return this.inTurn(sessionKey, async () => {
      this.panes.delete(sessionKey);
      await this.request({ type: "closeTerminal", sessionKey });
    });
  }

  private turns = new Map<string, Promise<unknown>>();

  /** Runs `work` after the terminal requests of `sessionKey` before it have settled. */
  private inTurn<T>(sessionKey: string, work: () => Promise<T>): Promise<T> {
    const before = this.turns.get(sessionKey) ?? Promise.resolve();
    const mine = before.catch(() => {}).then(work);
    const settled = mine.catch(() => {});
    this.turns.set(sessionKey, settled);
    void settled.then(() => {
      if (this.turns.get(sessionKey) === settled) this.turns.delete(sessionKey);
    });
    return mine;
  }

  private claim(sessionKey: string, onFrame: FrameHandler) {
    this.panes.set(sessionKey, onFrame);
    const kept = this.unclaimed.get(sessionKey);
    this.unclaimed.delete(sessionKey);
    for (const frame of kept ?? []) onFrame(frame);
  }
}
