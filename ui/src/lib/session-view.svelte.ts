// One open session as the window holds it: its finished turns, its current snapshot
// and the seq that snapshot is current at. Patches are applied in seq order; a gap
// (or patches arriving before the first snapshot) makes it re-read the snapshot and
// go on from there: replay, then live.
import type { PatchEvent, UniversalSnapshot } from "../generated";
import { LiveSnapshot } from "./live-snapshot.svelte";
import { asWireError, type Transport } from "./transport";

/** Something the window itself notes in a session's transcript (a steer's fate). */
export interface LocalNote {
  taskId: string | null;
  text: string;
}

/** An interaction that went away without this window answering it. */
export interface ClosedInteraction {
  promptId: string;
  title: string;
  reason: string;
}

/**
 * What the session header offers for the agent's terminal: open one (the session is
 * idle), show the one open in the kernel (opened by this window before, by another
 * window, or by `weft tui` in a shell: the pane attaches to it), or nothing to do until
 * the structured turn running ends (`wait`). Null while this window shows the pane.
 */
export type TerminalOffer = "open" | "show" | "wait" | null;

/** Earlier turns read at a time. */
const EARLIER_PAGE = 50;
/** After a missed patch, this many newest turns are read first (see `newerHistory`). */
const RECENT_TURNS = 4;

export class SessionView {
  readonly key: string;
  /** Final snapshots of finished turns, oldest first (not deep-reactive: they do not change). */
  history = $state.raw<UniversalSnapshot[]>([]);
  /**
   * Turns of the agent's own file from before the session's first turn in Weft (an
   * adopted session's past, a fork's inherited turns), oldest first; read-only.
   */
  earlier = $state.raw<UniversalSnapshot[]>([]);
  /** How many more of those come before `earlier` (0: all are here). */
  earlierBefore = $state(0);
  private earlierAsked = false;
  /** The current turn, one signal per field, so a text delta only re-renders the text. */
  readonly current = new LiveSnapshot();
  loaded = $state(false);
  loadError = $state<string | null>(null);
  notes = $state<LocalNote[]>([]);
  closedInteractions = $state<ClosedInteraction[]>([]);
  /** The seq `current` is at. */
  seq = 0;
  /** A turn the transcript should scroll to once it is drawn (a search hit's). */
  focusTaskId = $state<string | null>(null);
  /** How many times the snapshot was re-read after a gap (tests look at it). */
  resyncs = $state(0);

  /** This window shows the session's terminal pane. */
  terminalShown = $state(false);
  /** This window opened the session's terminal (until it closes it). */
  terminalOpened = $state(false);
  /** The program of the terminal this window shows has exited (its pane stays until closed). */
  terminalExited = $state(false);

  private loading: Promise<void> | null = null;
  private buffered: PatchEvent[] = [];
  private answered = new Set<string>();
  private readonly transport: Transport;

  constructor(key: string, transport: Transport) {
    this.key = key;
    this.transport = transport;
  }

  /** Turns to draw: the history, then the current turn unless history already ends with it. */
  get turns(): UniversalSnapshot[] {
    const cur = this.current;
    const own = this.history;
    const before = this.earlier;
    if (cur.taskId === null && cur.phase === "idle") return before.length ? [...before, ...own] : own;
    const past = cur.taskId === null ? own : own.filter((t) => t.taskId !== cur.taskId);
    return [...before, ...past, cur];
  }

  get running(): boolean {
    return this.current.phase === "streaming" || this.current.phase === "queued";
  }

  /**
   * The session's turn is the agent's own terminal, open in the kernel: opened here, or
   * (the snapshot says so) from anywhere else. Prompts queue behind it, Stop does not
   * apply, and a pane attaches to it rather than opening another.
   */
  get terminalOpen(): boolean {
    return this.current.terminal || (this.terminalOpened && !this.terminalExited);
  }

  /** A pane shown now attaches (to the terminal open, or to one this window opened) rather than opening one. */
  get terminalAttaches(): boolean {
    return this.current.terminal || this.terminalOpened;
  }

  get terminalOffer(): TerminalOffer {
    if (this.terminalShown) return null;
    if (this.terminalOpen) return "show";
    return this.running ? "wait" : "open";
  }

  /** Shows the terminal pane: it opens the terminal, or attaches when one is open. */
  showTerminal() {
    this.terminalShown = true;
  }

  /** The pane opened the terminal (a later pane re-attaches). */
  terminalStarted() {
    this.terminalOpened = true;
    this.terminalExited = false;
  }

  /** The terminal's program ended: the session's turns are structured again (Stop applies). */
  terminalEnded() {
    this.terminalExited = true;
  }

  /** The pane went with its terminal (closed, so ended). */
  terminalClosed() {
    this.terminalShown = false;
    this.terminalOpened = false;
    this.terminalExited = false;
  }

  /**
   * Loads history and the snapshot; patches arriving meanwhile are buffered. `gap`: only
   * a patch was missed, so the finished turns already held are still right and only
   * the newer ones are read (a session of 10,000 tool calls is megabytes of history).
   */
  load(gap = false): Promise<void> {
    this.loading ??= this.fetch(gap);
    return this.loading;
  }

  private async fetch(gap: boolean): Promise<void> {
    if (!this.earlierAsked) {
      this.earlierAsked = true;
      void this.loadEarlier();
    }
    try {
      const [at, history] = await Promise.all([
        this.transport.request({ type: "getSnapshot", sessionKey: this.key }),
        gap && this.loaded ? this.newerHistory() : this.wholeHistory(),
      ]);
      // The current turn, once finished, is also the last of the history: keep one copy.
      this.history = history.filter((t) => t.taskId === null || t.taskId !== at.snapshot.taskId);
      this.replaceCurrent(at.snapshot);
      this.seq = at.seq;
      this.loaded = true;
      this.loadError = null;
    } catch (error) {
      // Keep what was buffered; the next patch tries again.
      this.loadError = asWireError(error).message;
      this.loading = null;
      return;
    }
    this.loading = null;
    const waiting = this.buffered;
    this.buffered = [];
    for (const event of waiting) this.receive(event);
  }

  private wholeHistory(): Promise<UniversalSnapshot[]> {
    return this.transport.request({ type: "getHistory", sessionKey: this.key, limit: null, before: null });
  }

  /** The history held, with the turns finished since: the newest few, or all if they do not reach back to it. */
  private async newerHistory(): Promise<UniversalSnapshot[]> {
    const held = this.history;
    const last = held.at(-1)?.taskId;
    if (!last) return this.wholeHistory();
    const recent = await this.transport.request({ type: "getHistory", sessionKey: this.key, limit: RECENT_TURNS, before: null });
    const at = recent.findIndex((t) => t.taskId === last);
    if (at >= 0) return [...held, ...recent.slice(at + 1)];
    return recent.length < RECENT_TURNS ? recent : this.wholeHistory();
  }

  /**
   * The next page of earlier turns (the last ones first). A session with no agent file
   * (or a surface with no library, which refuses the verb) has none: its error is not the
   * session's.
   */
  async loadEarlier(page = EARLIER_PAGE): Promise<void> {
    const first = this.earlier.length === 0;
    if (!first && this.earlierBefore === 0) return;
    const start = first ? null : Math.max(0, this.earlierBefore - page);
    const limit = first ? page : this.earlierBefore - (start ?? 0);
    try {
      const got = await this.transport.request({ type: "earlierTurns", sessionKey: this.key, start, limit });
      this.earlier = [...got.turns, ...this.earlier];
      this.earlierBefore = got.start;
    } catch {
      // Not a session with turns before Weft's.
    }
  }

  private replaceCurrent(next: UniversalSnapshot) {
    this.noteVanished(next.interactions.map((i) => i.promptId), next);
    this.current.set(next);
  }

  /** Takes one patch event for this session. */
  receive(event: PatchEvent): void {
    if (this.loading || !this.loaded) {
      this.buffered.push(event);
      if (!this.loading && this.loadError === null) void this.load();
      return;
    }
    if (event.seq <= this.seq) return;
    // A merged patch (`from`..`seq`) applies only to the snapshot just before `from`.
    if ((event.from ?? event.seq) !== this.seq + 1) {
      this.resyncs += 1;
      this.buffered.push(event);
      void this.load(true);
      return;
    }
    const patch = event.patch;
    const cur = this.current;
    if (patch.taskId && cur.taskId && patch.taskId !== cur.taskId) {
      // The next turn starts: the finished one joins the history, detached.
      if (!this.history.some((t) => t.taskId === cur.taskId)) {
        this.history = [...this.history, cur.plain()];
      }
    }
    if (patch.interactions) {
      this.noteVanished(patch.interactions.map((i) => i.promptId), { ...cur.plain(), ...patch } as UniversalSnapshot);
    }
    cur.apply(patch);
    this.seq = event.seq;
  }

  /** Re-reads everything (the shell dropped patches). */
  resync(): Promise<void> {
    this.resyncs += 1;
    return this.load();
  }

  markAnswered(promptId: string) {
    this.answered.add(promptId);
  }

  addNote(text: string, taskId: string | null = this.current.taskId) {
    this.notes = [...this.notes, { taskId, text }];
  }

  dismissClosed(promptId: string) {
    this.closedInteractions = this.closedInteractions.filter((c) => c.promptId !== promptId);
  }

  private noteVanished(stillPending: string[], next: UniversalSnapshot) {
    const keep = new Set(stillPending);
    for (const gone of this.current.interactions) {
      if (keep.has(gone.promptId) || this.answered.has(gone.promptId)) continue;
      const reason =
        next.phase === "done" && next.incomplete
          ? "the turn was stopped"
          : next.phase === "done"
            ? "the turn ended before it was answered"
            : "it was cancelled or expired";
      this.closedInteractions = [
        ...this.closedInteractions,
        { promptId: gone.promptId, title: gone.title, reason },
      ];
    }
  }
}
