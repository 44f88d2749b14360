// The accounts as the window sees them: the kernel's list (never a secret), and the
// verbs that add, test, rename and remove one. A secret typed into the add dialog goes
// straight into the add request (the desktop app reaches the daemon over its own
// socket, the only transport that takes a secret) and is not kept here.
import type {
  AccountInfo,
  AccountSwitch,
  AccountTest,
  AccountUsageDay,
  AccountKindInfo,
  AddAccountRequest,
  AgentInfo,
  ClientRequest,
  LimitWindow,
} from "../generated";
import { AgentsStore } from "./agents.svelte";
import type { TerminalClient } from "./terminal/client";
import { requestOrNull, VerbError, wideRequester, type Reply, type Requester, type VerbsOf } from "./transport";

/** The account id that means the agent's own login. */
export const AMBIENT = "ambient";

/** The kinds `info`'s agent takes, in the order the add dialog offers them: its own, an
 * ACP agent's `env` (named variables), or none (a built-in agent). An agent the daemon
 * did not list is an ACP agent of the user's. */
export function kindsOf(info: AgentInfo | undefined): string[] {
  if (!info?.facts) return ["env"];
  if (!info.facts.accounts) return [];
  const own = info.facts.accountKinds.map((k) => k.id);
  return own.length > 0 ? own : ["env"];
}

/** The agents an account can be added for, as the daemon lists them. */
export function accountAgents(infos: AgentInfo[]): string[] {
  return infos.filter((i) => !i.facts || i.facts.accounts).map((i) => i.id);
}

/** The kind `kind` of `info`'s agent, when it is one of its own. */
export function kindInfo(info: AgentInfo | undefined, kind: string): AccountKindInfo | undefined {
  return info?.facts?.accountKinds.find((k) => k.id === kind);
}

/** Kinds whose secret the add dialog asks for. */
export const SECRET_KINDS = new Set(["api-key", "gateway", "setup-token", "endpoint", "env"]);

/** Whether an account of `kind` must have a secret (an ACP agent's variables or a local endpoint may not). */
export function secretRequired(kind: AccountKindInfo | undefined): boolean {
  return kind?.secret === "required";
}

export class AccountsStore {
  list = $state<AccountInfo[]>([]);
  /** The last test of each account, by id. */
  tests = $state<Record<string, AccountTest>>({});
  /** Usage per account per day, newest first. */
  usage = $state<AccountUsageDay[]>([]);
  error = $state<string | null>(null);
  /** A switch the agent's own session cannot follow, waiting for the user's word. */
  pendingSwitch = $state<{ sessionKey: string; account: string; warning: string; resume: boolean } | null>(null);
  /** Each session's opt-in to switching accounts by itself at a used-up limit, once read. */
  autoSwitch = $state<Record<string, boolean>>({});
  /** The agents Weft knows and installs (the Agents view). */
  readonly agents: AgentsStore;
  private readonly call: Requester | null;

  constructor(
    transport: VerbsOf,
    readonly terminals: TerminalClient | null = null,
  ) {
    this.call = wideRequester(transport);
    this.agents = new AgentsStore(this.call, terminals);
  }

  /** Whether this surface can reach the account verbs at all. */
  get available(): boolean {
    return this.call !== null;
  }

  forAgent(agent: string): AccountInfo[] {
    return this.list.filter((a) => a.agent === agent);
  }

  label(id: string | null | undefined): string {
    if (!id || id === AMBIENT) return "own login";
    return this.list.find((a) => a.id === id)?.label ?? id;
  }

  private run<R extends ClientRequest>(request: R): Promise<Reply<R> | null> {
    return requestOrNull(this.call, request, (message) => (this.error = message));
  }

  async refresh(): Promise<void> {
    const list = await this.run({ type: "listAccounts" });
    if (list) this.list = list;
  }

  async refreshUsage(): Promise<void> {
    const usage = await this.run({ type: "accountUsage", account: null });
    if (usage) this.usage = usage;
  }

  usageFor(account: string): AccountUsageDay[] {
    return this.usage.filter((d) => d.account === account);
  }

  /**
   * Starts the agent's own login inside the account's home (as `weft accounts login ID`
   * runs it) in a terminal of the daemon's; the key of that terminal, for a pane to attach to.
   */
  async login(account: string, cols = 100, rows = 16): Promise<string | null> {
    const attached = await this.run({ type: "loginAccount", account, cols, rows });
    return attached?.sessionKey ?? null;
  }

  /** A login's terminal ended: the account's record and its state, read again. */
  async loginEnded(account: string): Promise<void> {
    await this.refresh();
    await this.test(account);
  }

  /**
   * Accounts of `agent` a session on `current` could move to: the agent's own login
   * and every other account with no used-up window that has not reset yet.
   */
  withCapacity(agent: string, current: string | null, now = Date.now()): { id: string; label: string }[] {
    const spent = (a: AccountInfo) => a.limits.some((l) => l.status === "rejected" && (l.resetsAt === null || l.resetsAt > now));
    const out = this.forAgent(agent)
      .filter((a) => a.id !== current && !spent(a))
      .map((a) => ({ id: a.id, label: a.label }));
    if (current && current !== AMBIENT) out.push({ id: AMBIENT, label: this.label(AMBIENT) });
    return out;
  }

  /**
   * Whether moving `sessionKey` to `account` needs no word from the user; when the
   * agent's own session cannot follow, the warning waits in `pendingSwitch`.
   */
  async checkSwitch(sessionKey: string, account: string): Promise<boolean> {
    const check = await this.run({ type: "checkAccountSwitch", sessionKey, account });
    if (!check) return false;
    if (check.warning) {
      this.pendingSwitch = { sessionKey, account, warning: check.warning, resume: false };
      return false;
    }
    return true;
  }

  /**
   * Moves an idle session to `account` from its next turn (`resume`: the last prompt
   * runs again there). One the agent cannot follow waits in `pendingSwitch`.
   */
  async switchAccount(sessionKey: string, account: string, resume: boolean, confirm = false): Promise<AccountSwitch | null> {
    const done = await this.run({ type: "switchAccount", sessionKey, account, resume, confirm });
    if (done && !done.switched && done.warning) {
      this.pendingSwitch = { sessionKey, account, warning: done.warning, resume };
    } else if (done?.switched) {
      this.pendingSwitch = null;
      await this.refresh();
    }
    return done;
  }

  /** The user went ahead with the pending switch: a new agent session with a handover. */
  async confirmSwitch(): Promise<AccountSwitch | null> {
    const pending = this.pendingSwitch;
    if (!pending) return null;
    return this.switchAccount(pending.sessionKey, pending.account, pending.resume, true);
  }

  cancelSwitch() {
    this.pendingSwitch = null;
  }

  async loadAutoSwitch(sessionKey: string): Promise<void> {
    const got = await this.run({ type: "getAutoSwitch", sessionKey });
    if (got) this.autoSwitch = { ...this.autoSwitch, [sessionKey]: got.enabled };
  }

  async setAutoSwitch(sessionKey: string, enabled: boolean): Promise<void> {
    const set = await this.run({ type: "setAutoSwitch", sessionKey, enabled });
    if (set) this.autoSwitch = { ...this.autoSwitch, [sessionKey]: set.enabled };
  }

  async add(request: AddAccountRequest): Promise<AccountInfo | null> {
    const added = await this.run({ type: "addAccount", ...request });
    if (added) await this.refresh();
    return added;
  }

  async rename(account: string, label: string): Promise<boolean> {
    const renamed = await this.run({ type: "renameAccount", account, label });
    if (renamed) await this.refresh();
    return renamed !== null;
  }

  async remove(account: string, deleteHome: boolean): Promise<boolean> {
    if (!this.call) return false;
    try {
      this.error = null;
      await this.call({ type: "removeAccount", account, deleteHome });
    } catch (e) {
      this.error = new VerbError(e).message;
      return false;
    }
    await this.refresh();
    return true;
  }

  async test(account: string): Promise<AccountTest | null> {
    const result = await this.run({ type: "testAccount", account });
    if (result) this.tests = { ...this.tests, [account]: result };
    return result;
  }
}

/** An account's limit windows in a few words: "five_hour 42% · resets in 2h". */
export function limitsText(account: AccountInfo, now = Date.now()): string {
  return account.limits.map((l) => windowText(l, now)).join(", ");
}

/** One limit window in a few words: "five_hour 100% (rejected) · resets in 2h". */
export function windowText(l: LimitWindow, now = Date.now()): string {
  const used = l.usedPercent !== null ? ` ${Math.round(l.usedPercent)}%` : "";
  const reset = l.resetsAt !== null && l.resetsAt > now ? ` · resets in ${inWords(l.resetsAt - now)}` : "";
  const state = l.status && l.status !== "allowed" ? ` (${l.status})` : "";
  return `${l.window}${used}${state}${reset}`;
}

function inWords(ms: number): string {
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min}m`;
  const h = Math.round(min / 60);
  return h < 48 ? `${h}h` : `${Math.round(h / 24)}d`;
}

/** One day of an account's usage: "2026-12-01 · 3 turns · 1,200 in · 300 out · 50 cache read · $0.0123". */
export function usageDayText(d: AccountUsageDay): string {
  const n = (v: number) => v.toLocaleString("en-US");
  const priced = d.turns - d.unpricedTurns;
  const cost =
    d.unpricedTurns === 0
      ? `$${d.costUsd.toFixed(4)}`
      : priced > 0
        ? `$${d.costUsd.toFixed(4)} + unknown (${d.unpricedTurns} unpriced)`
        : "cost unknown";
  const parts = [d.day, `${d.turns} turn${d.turns === 1 ? "" : "s"}`, `${n(d.inputTokens)} in`, `${n(d.outputTokens)} out`];
  if (d.cacheReadTokens > 0) parts.push(`${n(d.cacheReadTokens)} cache read`);
  if (d.cacheWriteTokens > 0) parts.push(`${n(d.cacheWriteTokens)} cache write`);
  parts.push(cost);
  return parts.join(" · ");
}
