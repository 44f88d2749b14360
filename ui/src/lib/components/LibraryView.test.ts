import { afterEach, describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { ClientRequest, LibrarySession, UniversalSnapshot } from "../../generated";
import { LibraryStore, cost } from "../library.svelte";
import type { Transport } from "../transport";
import LibraryView from "./LibraryView.svelte";

const session = (s: Partial<LibrarySession>): LibrarySession => ({
  sessionKey: "claude:n1", origin: "native", agent: "claude", sessionId: "n1", title: "fix the parser",
  workdir: "/w", gitBranch: "main", model: "claude-sonnet-4-5", phase: null, turns: 2, messages: 4,
  createdAt: 1, updatedAt: 2, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0,
  sourceGone: false, archived: false, pinned: false, parentKey: null, relation: null, home: "/h/.claude",
  account: null, ...s,
});

const turn = (prompt: string, text: string): UniversalSnapshot =>
  ({ phase: "done", taskId: null, sessionId: "n1", agent: "claude", model: null, effort: null, prompt, attachments: [], text,
    reasoning: "", activity: "", plan: null, toolCalls: [], subAgents: [], usage: null, artifacts: [],
    interactions: [], queued: [], notices: [], commands: [], mcpServers: [], error: null, limitHit: null, incomplete: false, terminal: false, startedAt: 1,
    updatedAt: 1 }) as UniversalSnapshot;

function fake() {
  const sent: ClientRequest[] = [];
  const list = [session({}), session({ sessionKey: "echo:m1", origin: "managed", agent: "echo", title: "managed one" })];
  const request = async (r: ClientRequest): Promise<unknown> => {
    sent.push(r);
    switch (r.type) {
      case "listLibrary":
        return r.origin ? list.filter((s) => s.origin === r.origin) : list;
      case "libraryProgress":
        return { running: false, filesTotal: 1, filesDone: 1, bytesTotal: 10, bytesDone: 10, sweeps: 1 };
      case "searchLibrary":
        return [{ sessionKey: "claude:n1", origin: "native", agent: "claude", title: "fix the parser", workdir: "/w",
          taskId: null, turn: 1, offset: 0, kind: "reply", snippet: "use «parse_config» here", at: 1 }];
      case "openTranscript":
        // A fork not started yet shows its parent's turns up to the fork point.
        if (r.sessionKey === "claude:f1")
          return { sessionKey: r.sessionKey, total: 1, start: 0, sourceGone: false, turns: [turn("first ask", "first answer")] };
        return { sessionKey: r.sessionKey, total: 2, start: 0, sourceGone: false,
          turns: [turn("first ask", "first answer"), turn("second ask", "second answer, see [the docs](https://docs.example/x)")] };
      case "forkSession": {
        const forked = session({ sessionKey: "claude:f1", origin: "managed", sessionId: null, turns: r.at ?? 2,
          parentKey: r.sessionKey, relation: "fork" });
        list.push(forked);
        return forked;
      }
      case "exportSession":
        if (r.sessionKey !== "claude:n1") throw { code: "unknownSession", message: `unknown session \`${r.sessionKey}\`` };
        return r.format === "json" ? '{"turns": []}' : "# fix the parser\n";
      case "prompt":
        return { sessionKey: r.sessionKey, taskId: "t1" };
      case "usage":
        if (r.by === "block") {
          const start = Date.now() - 3_600_000;
          return [{ key: "b1", calls: 4, inputTokens: 100, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0,
            costUsd: 1.25, unpricedModels: [], costByModel: [], cacheHitRate: 0,
            block: { start, end: start + 5 * 3_600_000, firstAt: start, lastAt: start + 1_200_000, active: true,
              tokensPerMinute: 30, costPerHour: 3.75, projectedTokens: 8700, projectedCostUsd: 16.25 } }];
        }
        return [{ key: "2026-11-30", calls: 3, inputTokens: 10, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 0,
          costUsd: null, unpricedModels: ["mock-model"], costByModel: [], cacheHitRate: 0.33 }];
      default:
        throw { code: "badRequest", message: `unexpected ${r.type}` };
    }
  };
  return { sent, transport: { request } as unknown as Transport };
}

describe("LibraryView", () => {
  it("lists native beside managed sessions, searches, opens a transcript and continues it", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    let continued: string | null = null;
    render(LibraryView, { library, onclose: () => {}, oncontinued: (k: string) => (continued = k) });
    await waitFor(() => expect(screen.getAllByTestId("library-row").length).toBe(2));
    const origins = screen.getAllByTestId("library-row").map((r) => r.getAttribute("data-origin"));
    expect(origins).toEqual(["native", "managed"]);

    await fireEvent.input(screen.getByTestId("library-search"), { target: { value: "parse_config" } });
    await waitFor(() => expect(screen.getAllByTestId("library-hit")).toHaveLength(1));
    expect(screen.getByTestId("library-hits").textContent).toContain("«parse_config»");
    await fireEvent.click(screen.getByTestId("library-hit"));
    await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
    expect(screen.getByTestId("library-transcript").textContent).toContain("second ask");

    await fireEvent.input(screen.getByTestId("library-continue-input"), { target: { value: "and now?" } });
    await fireEvent.click(screen.getByTestId("library-continue"));
    await waitFor(() => expect(continued).toBe("claude:n1"));
    expect(sent.find((r) => r.type === "prompt")).toMatchObject({ sessionKey: "claude:n1", prompt: "and now?" });
  });

  it("opens a transcript's links outside the window", async () => {
    const { transport } = fake();
    const library = new LibraryStore(transport);
    const opened: [string, string | null][] = [];
    render(LibraryView, { library, onclose: () => {}, oncontinued: () => {}, initial: "claude:n1", onlink: (h: string, w: string | null) => opened.push([h, w]) });
    const link = await screen.findByRole("link", { name: "the docs" });
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    link.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(opened.map(([h]) => h)).toEqual(["https://docs.example/x"]);
  });

  it("forks at a turn, opens the fork with the turns it keeps, and continues the fork", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    let continued: string | null = null;
    render(LibraryView, { library, onclose: () => {}, oncontinued: (k: string) => (continued = k), initial: "claude:n1" });
    await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
    await fireEvent.click(screen.getAllByTestId("library-fork-at")[0]);
    await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(1));
    expect(sent.find((r) => r.type === "forkSession")).toMatchObject({ sessionKey: "claude:n1", at: 1 });
    expect(screen.getByTestId("library-transcript").textContent).not.toContain("second ask");
    await waitFor(() => expect(screen.getAllByTestId("library-row").map((r) => r.getAttribute("data-session"))).toContain("claude:f1"));

    await fireEvent.input(screen.getByTestId("library-continue-input"), { target: { value: "go on from here" } });
    await fireEvent.click(screen.getByTestId("library-continue"));
    await waitFor(() => expect(continued).toBe("claude:f1"));
    expect(sent.filter((r) => r.type === "prompt")).toMatchObject([{ sessionKey: "claude:f1", prompt: "go on from here" }]);
  });

  it("opens on the session it is given (a native row clicked in the sidebar)", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    render(LibraryView, { library, onclose: () => {}, oncontinued: () => {}, initial: "claude:n1" });
    await waitFor(() => expect(screen.getAllByTestId("library-turn").length).toBe(2));
    expect(sent.some((r) => r.type === "openTranscript" && r.sessionKey === "claude:n1")).toBe(true);
  });

  describe("Export", () => {
    afterEach(() => vi.restoreAllMocks());

    it("downloads the daemon's document in a browser", async () => {
      const { sent, transport } = fake();
      const blobs: Blob[] = [];
      const clicked: HTMLAnchorElement[] = [];
      URL.createObjectURL = vi.fn((b: Blob) => (blobs.push(b), "blob:x"));
      URL.revokeObjectURL = vi.fn();
      vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
        clicked.push(this);
      });
      const library = new LibraryStore(transport);
      render(LibraryView, { library, onclose: () => {}, oncontinued: () => {}, initial: "claude:n1" });
      await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
      await fireEvent.change(screen.getByTestId("library-export"), { target: { value: "markdown" } });
      await waitFor(() => expect(screen.getByTestId("library-exported").textContent).toContain("claude-n1.md"));
      expect(sent.filter((r) => r.type === "exportSession")).toEqual([
        { type: "exportSession", sessionKey: "claude:n1", format: "markdown" },
      ]);
      expect(clicked.map((a) => a.download)).toEqual(["claude-n1.md"]);
      // jsdom's Blob has no text(): read it as a browser would read a file.
      const read = await new Promise<string>((done) => {
        const reader = new FileReader();
        reader.onload = () => done(String(reader.result));
        reader.readAsText(blobs[0]);
      });
      expect(read).toBe("# fix the parser\n");
      expect(blobs[0].type).toBe("text/markdown");
      expect(URL.revokeObjectURL).toHaveBeenCalledWith("blob:x");
      // The control goes back to its label: the same format can be picked again.
      expect((screen.getByTestId("library-export") as HTMLSelectElement).value).toBe("");
    });

    it("has the desktop shell save it, and shows the daemon's error", async () => {
      const { sent, transport } = fake();
      const saved: [string, string][] = [];
      const desktop = {
        ...transport,
        request: transport.request,
        saveExport: async (key: string, format: string) => {
          saved.push([key, format]);
          if (key !== "claude:n1") throw new Error(`unknown session \`${key}\``);
          return saved.length === 1 ? "/home/me/claude-n1.json" : null;
        },
      } as unknown as Transport;
      const library = new LibraryStore(desktop);
      render(LibraryView, { library, onclose: () => {}, oncontinued: () => {}, initial: "claude:n1" });
      await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
      await fireEvent.change(screen.getByTestId("library-export"), { target: { value: "json" } });
      await waitFor(() => expect(screen.getByTestId("library-exported").textContent).toContain("/home/me/claude-n1.json"));
      expect(saved).toEqual([["claude:n1", "json"]]);
      expect(sent.some((r) => r.type === "exportSession")).toBe(false);
      // Cancelled in the dialog: nothing is claimed.
      await fireEvent.change(screen.getByTestId("library-export"), { target: { value: "markdown" } });
      await waitFor(() => expect(saved).toHaveLength(2));
      await waitFor(() => expect(screen.queryByTestId("library-exported")).toBeNull());
      await library.exportSession("echo:gone", "markdown");
      expect(library.error).toContain("unknown session `echo:gone`");
    });
  });

  it("shows usage per day with an unknown cost, never $0", async () => {
    const { transport } = fake();
    const library = new LibraryStore(transport);
    render(LibraryView, { library, onclose: () => {}, oncontinued: () => {} });
    await fireEvent.click(screen.getByTestId("library-tab-usage"));
    await waitFor(() => expect(screen.getAllByTestId("usage-row")).toHaveLength(1));
    expect(screen.getByTestId("usage-row").textContent).toContain("unknown");
    expect(screen.getByTestId("usage-unpriced").textContent).toContain("mock-model");
    expect(cost({ costUsd: 0.5 } as never)).toBe("$0.50");
  });

  it("shows Claude's active 5-hour block with its burn rate and projection", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    render(LibraryView, { library, onclose: () => {}, oncontinued: () => {} });
    await fireEvent.click(screen.getByTestId("library-tab-usage"));
    await waitFor(() => expect(screen.getByTestId("usage-block-active")).toBeTruthy());
    expect(sent.some((r) => r.type === "usage" && r.by === "block")).toBe(true);
    const rate = screen.getByTestId("usage-burn-rate").textContent ?? "";
    expect(rate).toContain("30 tokens/min");
    expect(rate).toContain("$3.75/h");
    expect(rate).toContain("projected 8700 tokens, $16.25");
    expect(screen.getAllByTestId("usage-block-row")).toHaveLength(1);
  });
});
