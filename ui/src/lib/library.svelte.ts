// The session library in the window: every session, Weft's and each agent's own
// (found in ~/.claude, ~/.codex, ~/.gemini by the daemon's indexer), searched, opened
// read-only page by page, continued or forked, and usage rolled up per day and model.
// Every call is a wire verb through the transport's generic `request`.
import type {
  ClientRequest,
  ExportFormat,
  LibraryHit,
  LibraryProgress,
  LibrarySession,
  Origin,
  PromptAccepted,
  TranscriptPage,
  UsageBy,
  UsageRow,
} from "../generated";
import { requestOrNull, wideRequester, type Reply, type Requester, type Transport, type VerbsOf } from "./transport";

export class LibraryStore {
  // Raw: thousands of rows, replaced whole on each refresh (a deep proxy made the view slow to open).
  sessions = $state.raw<LibrarySession[]>([]);
  /** The agents' own sessions, whatever the view's filter: the sidebar lists them. */
  natives = $state.raw<LibrarySession[]>([]);
  /** The agents' own sessions whose transcript matches the sidebar's search. */
  nativeHits = $state<LibraryHit[]>([]);
  private nativeSearchGen = 0;
  hits = $state<LibraryHit[] | null>(null);
  progress = $state<LibraryProgress | null>(null);
  page = $state<TranscriptPage | null>(null);
  usage = $state<UsageRow[]>([]);
  /** Claude's 5-hour billing blocks, oldest first. */
  blocks = $state<UsageRow[]>([]);
  error = $state<string | null>(null);
  origin = $state<Origin | null>(null);
  /** Where the last export went (a path, or the downloaded file's name). */
  exported = $state<string | null>(null);
  private call: Requester | null;
  private saveExport: Transport["saveExport"];

  constructor(transport: VerbsOf) {
    this.call = wideRequester(transport);
    this.saveExport = transport.saveExport?.bind(transport);
  }

  /** False where the surface has no generic request (then the view is not offered). */
  get available(): boolean {
    return this.call !== null;
  }

  private run<R extends ClientRequest>(request: R): Promise<Reply<R> | null> {
    return requestOrNull(this.call, request, (message) => (this.error = message));
  }

  async refresh(): Promise<void> {
    const [list, progress] = await Promise.all([
      this.run({
        type: "listLibrary",
        workdir: null,
        agent: null,
        origin: this.origin,
        archived: false,
        limit: 5000,
        offset: null,
      }),
      this.run({ type: "libraryProgress" }),
    ]);
    if (list) this.sessions = list;
    if (progress) this.progress = progress;
  }

  async refreshNatives(): Promise<void> {
    const [list, progress] = await Promise.all([
      this.run({
        type: "listLibrary",
        workdir: null,
        agent: null,
        origin: "native",
        archived: false,
        limit: 5000,
        offset: null,
      }),
      this.run({ type: "libraryProgress" }),
    ]);
    if (list) this.natives = list;
    if (progress) this.progress = progress;
  }

  /** The sidebar's search over the agents' own transcripts (Weft's are searched by the app). */
  async searchNatives(query: string): Promise<void> {
    const gen = ++this.nativeSearchGen;
    if (query.trim().length < 2) {
      this.nativeHits = [];
      return;
    }
    const hits = await this.run({
      type: "searchLibrary",
      query: query.trim(),
      agent: null,
      workdir: null,
      since: null,
      until: null,
      limit: 30,
    });
    if (hits && gen === this.nativeSearchGen) this.nativeHits = hits.filter((h) => h.origin === "native");
  }

  async search(query: string): Promise<void> {
    if (!query.trim()) {
      this.hits = null;
      return;
    }
    const hits = await this.run({
      type: "searchLibrary",
      query,
      agent: null,
      workdir: null,
      since: null,
      until: null,
      limit: 50,
    });
    if (hits) this.hits = hits;
  }

  /** The last turns of a session's transcript (from the agent's own file). */
  async open(sessionKey: string, start: number | null = null): Promise<void> {
    const page = await this.run({ type: "openTranscript", sessionKey, start, limit: 50 });
    if (page) this.page = page;
  }

  /** Continue: the prompt goes to the same key; the daemon adopts the session and the agent resumes it. */
  async continueWith(sessionKey: string, prompt: string): Promise<PromptAccepted | null> {
    return this.run({
      type: "prompt",
      prompt,
      agent: null,
      sessionKey,
      workdir: null,
      model: null,
      effort: null,
      attachments: [],
      account: null,
      pack: null,
    } as Extract<ClientRequest, { type: "prompt" }>);
  }

  async fork(sessionKey: string, at: number | null): Promise<LibrarySession | null> {
    const forked = await this.run({ type: "forkSession", sessionKey, at });
    if (forked) await this.refresh();
    return forked;
  }

  /**
   * Export: in the desktop app the shell saves it where the user picks; in a browser
   * the daemon's document becomes a download.
   */
  async exportSession(sessionKey: string, format: ExportFormat): Promise<void> {
    this.exported = null;
    if (this.saveExport) {
      try {
        this.error = null;
        this.exported = await this.saveExport(sessionKey, format);
      } catch (e) {
        this.error = e instanceof Error ? e.message : String(e);
      }
      return;
    }
    const text = await this.run({ type: "exportSession", sessionKey, format });
    if (text === null) return;
    const name = `${sessionKey.slice(0, 48).replace(/[^A-Za-z0-9_-]/g, "-") || "session"}.${format === "json" ? "json" : "md"}`;
    const url = URL.createObjectURL(new Blob([text], { type: format === "json" ? "application/json" : "text/markdown" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.click();
    URL.revokeObjectURL(url);
    this.exported = name;
  }

  async loadUsage(by: UsageBy = "day"): Promise<void> {
    const rows = await this.run({ type: "usage", by, since: null });
    // Refreshed while the page is open: an unchanged answer does not redraw the chart.
    if (rows && JSON.stringify(rows) !== JSON.stringify(this.usage)) this.usage = rows;
  }

  /** The billing blocks of the last week. */
  async loadBlocks(now = Date.now()): Promise<void> {
    const rows = await this.run({ type: "usage", by: "block", since: now - 7 * 86_400_000 });
    if (rows && JSON.stringify(rows) !== JSON.stringify(this.blocks)) this.blocks = rows;
  }
}

/** Tokens in a short form: 1234 → "1.2k". */
export function tokens(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** A cost, or "unknown" when no model of the row has a price (never $0). */
export function cost(row: UsageRow): string {
  return row.costUsd === null ? "unknown" : `$${row.costUsd.toFixed(2)}`;
}
