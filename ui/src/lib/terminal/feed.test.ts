import { describe, expect, it } from "vitest";
import { XtermFeed, type FeedSink } from "./feed";

/** An xterm stand-in: records calls; parses only when told to. */
function sink() {
  const log: string[] = [];
  const unparsed: (() => void)[] = [];
  const s: FeedSink & { log: string[]; parseAll(): void } = {
    log,
    reset: () => log.push("reset"),
    write: (data, parsed) => {
      log.push(typeof data === "string" ? `write:${data}` : `write:${data.length}`);
      unparsed.push(parsed);
    },
    catchUp: () => log.push("catchUp"),
    parseAll: () => unparsed.splice(0).forEach((p) => p()),
  };
  return s;
}

const bytes = (n: number) => ({ reset: false, write: new Uint8Array(n) });

describe("XtermFeed", () => {
  it("passes output through while xterm keeps up", () => {
    const s = sink();
    const feed = new XtermFeed(s, 100);
    feed.take(bytes(60));
    s.parseAll();
    feed.take(bytes(60));
    s.parseAll();
    expect(s.log).toEqual(["write:60", "write:60"]);
    expect(feed.backlog).toBe(0);
    expect(feed.skipped).toBe(0);
  });

  it("stops feeding past the limit, asks for the screen once xterm has drawn, resumes on it", () => {
    const s = sink();
    const feed = new XtermFeed(s, 100);
    feed.take(bytes(60));
    feed.take(bytes(60)); // 120 unparsed: over the limit
    feed.take(bytes(60)); // dropped
    expect(feed.skipping).toBe(true);
    expect(s.log).toEqual(["write:60", "write:60"]);
    s.parseAll();
    expect(s.log.at(-1)).toBe("catchUp");
    expect(feed.skipped).toBe(1);
    feed.take({ reset: true, write: new Uint8Array(5) });
    feed.take(bytes(7));
    expect(s.log.slice(-3)).toEqual(["reset", "write:5", "write:7"]);
    expect(feed.skipping).toBe(false);
  });

  it("shows the child's last screen when it ends while skipping, and asks for nothing", () => {
    const s = sink();
    const feed = new XtermFeed(s, 100);
    feed.take(bytes(200));
    expect(feed.skipping).toBe(true);
    feed.take({ reset: false, write: new Uint8Array(0), exit: { code: 0, signal: null, screen: "last\nbye" } });
    expect(s.log.slice(-2)).toEqual(["reset", "write:last\r\nbye"]);
    s.parseAll();
    expect(s.log).not.toContain("catchUp");
  });
});
