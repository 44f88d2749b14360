// Which sessions changed since the user last looked at them (the sidebar's unread
// dots), kept per window in localStorage.

const SEEN_KEY = "weft.seen";
/** How often the open session's "seen up to" is written down while it streams. */
const SEEN_EVERY_MS = 1000;

function readSeen(): Record<string, number> {
  try {
    const seen: unknown = JSON.parse(globalThis.localStorage?.getItem(SEEN_KEY) ?? "{}");
    return seen && typeof seen === "object" && !Array.isArray(seen) ? (seen as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** When the user last saw each session (its updatedAt then): later changes are unread. */
export class SeenMarks {
  private seen = $state<Record<string, number>>(readSeen());
  private baseline = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pending: { key: string; at: number } | null = null;

  /** Session `key`, last changed at `updatedAt`, changed since the user saw it. */
  unread(key: string, updatedAt: number): boolean {
    const seen = this.seen[key];
    return seen === undefined ? this.baseline : updatedAt > seen;
  }

  /** The user saw session `key` as it was at `at`. */
  mark(key: string, at: number) {
    if ((this.seen[key] ?? 0) >= at) return;
    this.seen = { ...this.seen, [key]: at };
    this.save();
  }

  /**
   * The open session is seen as it streams, but writing that down on every patch would
   * copy and store the whole seen map (a key per session: thousands) many times a
   * second; its own unread mark is off while it is open anyway. At most once a second,
   * and at once when another session is opened ([`flush`]).
   */
  later(key: string, at: number) {
    this.pending = { key, at };
    this.timer ??= setTimeout(() => this.flush(), SEEN_EVERY_MS);
  }

  flush() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pending = this.pending;
    this.pending = null;
    if (pending) this.mark(pending.key, pending.at);
  }

  /**
   * The window's first session list: what was there before counts as seen, unless the
   * window had seen it older; a session that appears later is unread.
   */
  baselineFrom(sessions: { sessionKey: string; updatedAt: number }[]) {
    if (this.baseline) return;
    const seen: Record<string, number> = {};
    for (const s of sessions) seen[s.sessionKey] = this.seen[s.sessionKey] ?? s.updatedAt;
    this.seen = seen;
    this.save();
    this.baseline = true;
  }

  private save() {
    localStorage.setItem(SEEN_KEY, JSON.stringify(this.seen));
  }
}
