// A library over a fake daemon (the LibraryView and UsagePage tests).
import type { ClientRequest, LibrarySession, UniversalSnapshot } from "../../generated";
import type { Transport } from "../transport";

export const session = (s: Partial<LibrarySession>): LibrarySession => ({
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

export function fake() {
  const sent: ClientRequest[] = [];
  const list = [session({}), session({ sessionKey: "echo:m1", origin: "managed", agent: "echo", title: "managed one" })];
  const request = async (r: ClientRequest): Promise<unknown> => {
    sent.push(r);
    switch (r.type) {
      case "listLibrary":
        return r.origin ? list.filter((s) => s.origin === r.origin) : [...list];
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

