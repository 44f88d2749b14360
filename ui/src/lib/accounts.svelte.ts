// The accounts as the window sees them: the kernel's list (never a secret), and the
// verbs that add, test, rename and remove one. A secret typed into the add dialog goes
// straight into the add request (the desktop app reaches the daemon over its own
// socket, the only transport that takes a secret) and is not kept here.
import type { AccountInfo, AccountTest, AddAccountRequest, ClientRequest } from "../generated";
import { VerbError, type Transport } from "./transport";

/** The account id that means the agent's own login. */
export const AMBIENT = "ambient";

/** The kinds each agent takes, in the order the add dialog offers them. */
export const KINDS: Record<string, string[]> = {
  claude: ["api-key", "gateway", "setup-token", "login", "bedrock", "vertex"],
  codex: ["api-key", "endpoint", "login"],
  gemini: ["api-key", "endpoint", "login", "vertex"],
};

/** Kinds whose secret the add dialog asks for. */
export const SECRET_KINDS = new Set(["api-key", "gateway", "setup-token", "endpoint"]);

type Requester = (request: ClientRequest) => Promise<unknown>;

export class AccountsStore {
  list = $state<AccountInfo[]>([]);
  /** The last test of each account, by id. */
  tests = $state<Record<string, AccountTest>>({});
  error = $state<string | null>(null);
  private readonly call: Requester | null;

  constructor(transport: Transport) {
    const request = transport.request?.bind(transport);
    this.call = request ? (r) => request(r) : null;
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

  private async run<T>(request: ClientRequest): Promise<T | null> {
    if (!this.call) return null;
    try {
      this.error = null;
      return (await this.call(request)) as T;
    } catch (e) {
      this.error = new VerbError(e).message;
      return null;
    }
  }

  async refresh(): Promise<void> {
    const list = await this.run<AccountInfo[]>({ type: "listAccounts" });
    if (list) this.list = list;
  }

  async add(request: AddAccountRequest): Promise<AccountInfo | null> {
    const added = await this.run<AccountInfo>({ type: "addAccount", ...request });
    if (added) await this.refresh();
    return added;
  }

  async rename(account: string, label: string): Promise<boolean> {
    const renamed = await this.run<AccountInfo>({ type: "renameAccount", account, label });
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
    const result = await this.run<AccountTest>({ type: "testAccount", account });
    if (result) this.tests = { ...this.tests, [account]: result };
    return result;
  }
}

/** An account's limit windows in a few words: "five_hour 42% · resets in 2h". */
export function limitsText(account: AccountInfo, now = Date.now()): string {
  return account.limits
    .map((l) => {
      const used = l.usedPercent !== null ? ` ${Math.round(l.usedPercent)}%` : "";
      const reset = l.resetsAt !== null && l.resetsAt > now ? ` · resets in ${inWords(l.resetsAt - now)}` : "";
      const state = l.status && l.status !== "allowed" ? ` (${l.status})` : "";
      return `${l.window}${used}${state}${reset}`;
    })
    .join(", ");
}

function inWords(ms: number): string {
  const min = Math.round(ms / 60_000);
  if (min < 60) return `${min}m`;
  const h = Math.round(min / 60);
  return h < 48 ? `${h}h` : `${Math.round(h / 24)}d`;
}
