import { describe, expect, it } from "vitest";
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
  ({ phase: "done", taskId: null, sessionId: "n1", agent: "claude", model: null, effort: null, prompt, text,
    reasoning: "", activity: "", plan: null, toolCalls: [], subAgents: [], usage: null, artifacts: [],
    interactions: [], queued: [], notices: [], error: null, incomplete: false, terminal: false, startedAt: 1,
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
        return { sessionKey: r.sessionKey, total: 2, start: 0, sourceGone: false,
          turns: [turn("first ask", "first answer"), turn("second ask", "second answer")] };
      case "prompt":
        return { sessionKey: r.sessionKey, taskId: "t1" };
      case "usage":
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

  it("opens on the session it is given (a native row clicked in the sidebar)", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    render(LibraryView, { library, onclose: () => {}, oncontinued: () => {}, initial: "claude:n1" });
    await waitFor(() => expect(screen.getAllByTestId("library-turn").length).toBe(2));
    expect(sent.some((r) => r.type === "openTranscript" && r.sessionKey === "claude:n1")).toBe(true);
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
});
