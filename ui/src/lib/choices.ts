// What a new session in a workspace starts with: the agent, model and effort last used
// there (and the account, once a session names one), kept in the window's storage.

export interface Choices {
  agent: string;
  model: string | null;
  effort: string | null;
  account?: string | null;
}

const KEY = "weft.choices";
/** Workspaces remembered at most; the least recently used go first. */
const KEEP = 200;

type Store = Pick<Storage, "getItem" | "setItem">;

export class ChoiceMemory {
  constructor(private readonly storage: Store | null = globalThis.localStorage ?? null) {}

  private all(): Record<string, Choices & { at: number }> {
    try {
      const v: unknown = JSON.parse(this.storage?.getItem(KEY) ?? "{}");
      return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, Choices & { at: number }>) : {};
    } catch {
      return {};
    }
  }

  get(workdir: string | null): Choices | null {
    if (!workdir) return null;
    const c = this.all()[workdir];
    if (!c || typeof c.agent !== "string" || !c.agent) return null;
    const str = (v: unknown) => (typeof v === "string" && v ? v : null);
    const out: Choices = { agent: c.agent, model: str(c.model), effort: str(c.effort) };
    if (c.account !== undefined) out.account = str(c.account);
    return out;
  }

  set(workdir: string | null, choices: Choices) {
    if (!workdir || !this.storage) return;
    const all = this.all();
    all[workdir] = { ...choices, at: Date.now() };
    const kept = Object.entries(all)
      .sort((a, b) => (b[1].at ?? 0) - (a[1].at ?? 0))
      .slice(0, KEEP);
    this.storage.setItem(KEY, JSON.stringify(Object.fromEntries(kept)));
  }
}
