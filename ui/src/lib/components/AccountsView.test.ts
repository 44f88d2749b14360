import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { AccountInfo, AccountKindInfo, AccountUsageDay, AgentFacts, ClientRequest } from "../../generated";
import { AccountsStore, limitsText, usageDayText } from "../accounts.svelte";
import type { TerminalClient } from "../terminal/client";
import type { Transport } from "../transport";
import AccountsView from "./AccountsView.svelte";

// The agents as the daemon lists them, each with its spec's account facts.
const kind = (id: string, secret: string, protocols: string[] = []): AccountKindInfo => ({
  id, login: id === "login", secret, baseUrl: "optional", protocols,
});
const facts = (accounts: boolean, accountKinds: AccountKindInfo[] = []): AgentFacts => ({
  accounts, accountKinds, packs: [], undo: false, attachments: true, forkAtTurn: false,
});
const AGENTS = [
  { id: "echo", facts: facts(false) },
  {
    id: "claude",
    facts: facts(true, [
      kind("api-key", "required"), kind("gateway", "required"), kind("setup-token", "required"),
      kind("login", "no"), kind("bedrock", "optional"), kind("vertex", "optional"),
    ]),
  },
  { id: "kimi", facts: facts(true) },
  {
    id: "native",
    facts: facts(true, [kind("endpoint", "optional", ["anthropic-messages", "openai-responses", "openai-chat", "gemini"])]),
  },
];

const account = (a: Partial<AccountInfo>): AccountInfo => ({
  id: "acct-1", agent: "claude", kind: "api-key", label: "work", homeDir: null, baseUrl: null, protocol: null,
  models: [], env: {}, secret: { type: "store" }, secretVar: null, limits: [], createdAt: 1, updatedAt: 1, ...a,
});

const day = (d: Partial<AccountUsageDay>): AccountUsageDay => ({
  account: "acct-1", day: "2026-12-01", inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0,
  costUsd: 0, unpricedTurns: 0, turns: 1, ...d,
});

/** A transport that answers the account verbs from a list and records every request. */
function fake(initial: AccountInfo[] = [], usage: AccountUsageDay[] = []) {
  const sent: ClientRequest[] = [];
  let list: AccountInfo[] = initial;
  const request = async (r: ClientRequest): Promise<unknown> => {
    sent.push(r);
    switch (r.type) {
      case "listAccounts":
        return list;
      case "addAccount": {
        const a = account({ id: `acct-${list.length + 1}`, agent: r.agent, kind: r.kind, label: r.label, baseUrl: r.baseUrl });
        list = [...list, a];
        return a;
      }
      case "testAccount":
        return { id: r.account, ok: false, status: "wrongKey", detail: "the endpoint refused its key (401)" };
      case "removeAccount":
        list = list.filter((a) => a.id !== r.account);
        return null;
      case "accountUsage":
        return usage;
      case "loginAccount":
        return { sessionKey: `login:${r.account}` };
      case "listAgentInfo":
        return AGENTS;
      case "listAgentInstalls":
        return [];
      default:
        throw { code: "badRequest", message: `unexpected ${r.type}` };
    }
  };
  return { sent, transport: { request } as unknown as Transport };
}

describe("AccountsView", () => {
  it("adds an api-key account with its secret in the request only, then tests and removes it", async () => {
    const { sent, transport } = fake();
    const accounts = new AccountsStore(transport);
    render(AccountsView, { accounts });
    await fireEvent.input(screen.getByTestId("account-label-input"), { target: { value: "work key" } });
    await fireEvent.input(screen.getByTestId("account-base-url"), { target: { value: "http://127.0.0.1:9" } });
    await fireEvent.input(screen.getByTestId("account-secret"), { target: { value: "sk-typed-secret" } });
    await fireEvent.click(screen.getByTestId("account-add-submit"));
    await waitFor(() => expect(screen.getAllByTestId("account-row")).toHaveLength(1));
    const add = sent.find((r) => r.type === "addAccount");
    expect(add).toMatchObject({ agent: "claude", kind: "api-key", label: "work key", secret: { type: "value", value: "sk-typed-secret" } });
    expect((screen.getByTestId("account-secret") as HTMLInputElement).value).toBe("");
    expect(document.body.textContent).not.toContain("sk-typed-secret");

    await fireEvent.click(screen.getByTestId("account-test"));
    await waitFor(() => expect(screen.getByTestId("account-test-result").textContent).toContain("wrongKey"));

    await fireEvent.click(screen.getByTestId("account-remove"));
    await fireEvent.click(screen.getByTestId("account-remove-confirm"));
    await waitFor(() => expect(screen.queryAllByTestId("account-row")).toHaveLength(0));
  });

  it("says each limit window's use and when it resets", () => {
    const a = account({
      limits: [{ window: "five_hour", status: "allowed_warning", usedPercent: 91.6, resetsAt: 10_000 + 2 * 3_600_000, seenAt: 1 }],
    });
    expect(limitsText(a, 10_000)).toBe("five_hour 92% (allowed_warning) · resets in 2h");
  });

  it("shows each account's usage per day, a day with unpriced turns as unknown", async () => {
    const { transport } = fake(
      [account({ id: "acct-1", label: "work" }), account({ id: "acct-2", label: "home" })],
      [
        day({ account: "acct-1", day: "2026-12-01", turns: 3, inputTokens: 1200, outputTokens: 300, cacheReadTokens: 50, costUsd: 0.0123 }),
        day({ account: "acct-1", day: "2026-11-30", turns: 1, inputTokens: 10, outputTokens: 5, unpricedTurns: 1 }),
        day({ account: "acct-2", day: "2026-12-01", turns: 2, inputTokens: 7, outputTokens: 9, costUsd: 0.5, unpricedTurns: 1 }),
      ],
    );
    render(AccountsView, { accounts: new AccountsStore(transport) });
    await waitFor(() => expect(screen.getAllByTestId("account-usage-day")).toHaveLength(3));
    const work = document.querySelector('[data-account="acct-1"]')!;
    const days = [...work.querySelectorAll('[data-testid="account-usage-day"]')].map((e) => e.textContent);
    expect(days).toEqual(["2026-12-01 · 3 turns · 1,200 in · 300 out · 50 cache read · $0.0123", "2026-11-30 · 1 turn · 10 in · 5 out · cost unknown"]);
    const home = document.querySelector('[data-account="acct-2"] [data-testid="account-usage-day"]')!;
    expect(home.textContent).toBe("2026-12-01 · 2 turns · 7 in · 9 out · $0.5000 + unknown (1 unpriced)");
  });

  it("logs a login account in through the daemon's terminal, and only a login account", async () => {
    const { sent, transport } = fake([account({ id: "acct-9", kind: "login", label: "sub", homeDir: "/h", secret: { type: "none" } }), account({})]);
    const terminals = { close: async () => {}, attach: async () => {}, detach: async () => {}, write: async () => {}, resize: async () => {} } as unknown as TerminalClient;
    render(AccountsView, { accounts: new AccountsStore(transport, terminals) });
    await waitFor(() => expect(screen.getAllByTestId("account-row")).toHaveLength(2));
    expect(screen.getAllByTestId("account-login")).toHaveLength(1);
    await fireEvent.click(screen.getByTestId("account-login"));
    await waitFor(() => expect(screen.getByTestId("account-login-pane").getAttribute("data-account")).toBe("acct-9"));
    expect(sent.find((r) => r.type === "loginAccount")).toMatchObject({ account: "acct-9" });
  });

  it("words a usage day", () => {
    expect(usageDayText(day({ turns: 2, inputTokens: 1000, outputTokens: 20, cacheWriteTokens: 5, costUsd: 1 }))).toBe(
      "2026-12-01 · 2 turns · 1,000 in · 20 out · 5 cache write · $1.0000",
    );
  });

  it("adds an ACP agent's env account with its secret variable, and a native endpoint with protocol and models", async () => {
    const { sent, transport } = fake();
    render(AccountsView, { accounts: new AccountsStore(transport) });
    await waitFor(() => expect(screen.getByTestId("account-agent").querySelector('option[value="kimi"]')).toBeTruthy());
    expect(screen.getByTestId("account-agent").querySelector('option[value="echo"]')).toBeNull();
    await fireEvent.change(screen.getByTestId("account-agent"), { target: { value: "kimi" } });
    await waitFor(() => expect((screen.getByTestId("account-kind") as HTMLSelectElement).value).toBe("env"));
    await fireEvent.input(screen.getByTestId("account-label-input"), { target: { value: "kimi key" } });
    await fireEvent.input(screen.getByTestId("account-env"), { target: { value: "KIMI_BASE_URL=http://127.0.0.1:9" } });
    await fireEvent.input(screen.getByTestId("account-secret"), { target: { value: "sk-kimi" } });
    expect((screen.getByTestId("account-add-submit") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("account-secret-var"), { target: { value: "KIMI_API_KEY" } });
    await fireEvent.click(screen.getByTestId("account-add-submit"));
    await waitFor(() => expect(sent.filter((r) => r.type === "addAccount")).toHaveLength(1));
    expect(sent.find((r) => r.type === "addAccount")).toMatchObject({
      agent: "kimi", kind: "env", env: { KIMI_BASE_URL: "http://127.0.0.1:9" }, secret: { type: "value", value: "sk-kimi" }, secretVar: "KIMI_API_KEY",
    });

    await fireEvent.change(screen.getByTestId("account-agent"), { target: { value: "native" } });
    await waitFor(() => expect((screen.getByTestId("account-kind") as HTMLSelectElement).value).toBe("endpoint"));
    await fireEvent.input(screen.getByTestId("account-label-input"), { target: { value: "local" } });
    await fireEvent.input(screen.getByTestId("account-base-url"), { target: { value: "http://127.0.0.1:11434/v1" } });
    await fireEvent.change(screen.getByTestId("account-protocol"), { target: { value: "openai-chat" } });
    await fireEvent.input(screen.getByTestId("account-models"), { target: { value: "qwen3, llama3" } });
    // A local server may want no key.
    await fireEvent.click(screen.getByTestId("account-add-submit"));
    await waitFor(() => expect(sent.filter((r) => r.type === "addAccount")).toHaveLength(2));
    expect(sent.filter((r) => r.type === "addAccount")[1]).toMatchObject({
      agent: "native", kind: "endpoint", protocol: "openai-chat", models: ["qwen3", "llama3"], secret: null, secretVar: null,
    });
  });
});
