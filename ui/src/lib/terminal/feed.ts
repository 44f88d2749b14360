// Flow control between the terminal stream and xterm.js. xterm parses what it is given
// on its own schedule and drops input past 50 MB queued, so a burst of output (a build
// log, `cat` of a big file) would lose its tail. Past `limit` bytes handed over and not
// yet parsed, the feed stops writing; once xterm has drawn what it has, it asks for a
// re-attach (the bridge's current screen, then live output from there).
import type { Action } from "./stream";

export interface FeedSink {
  reset(): void;
  /** Hands `data` to xterm; `parsed` runs once xterm has taken it in. */
  write(data: Uint8Array | string, parsed: () => void): void;
  /** Asks the backend for the current screen (it arrives as a reset action). */
  catchUp(): void;
}

export class XtermFeed {
  /** Bytes handed to xterm and not yet parsed. */
  backlog = 0;
  skipping = false;
  /** Times the feed skipped ahead (tests and benchmarks read it). */
  skipped = 0;
  private exited = false;

  constructor(
    private readonly sink: FeedSink,
    private readonly limit: number,
  ) {}

  take(action: Action): void {
    if (action.reset) {
      this.sink.reset();
      this.skipping = false;
    }
    if (action.write.length && !this.skipping) {
      const size = action.write.length;
      this.backlog += size;
      this.sink.write(action.write, () => {
        this.backlog -= size;
        if (this.skipping && this.backlog === 0 && !this.exited) {
          this.skipped += 1;
          this.sink.catchUp();
        }
      });
      if (this.backlog > this.limit) this.skipping = true;
    }
    if (action.exit) {
      this.exited = true;
      // The child ended while the feed was skipping: there is no terminal left to
      // re-attach to, so show the last screen it left.
      if (this.skipping) {
        this.skipping = false;
        this.sink.reset();
        this.sink.write(action.exit.screen.replace(/\n/g, "\r\n"), () => {});
      }
    }
  }
}
