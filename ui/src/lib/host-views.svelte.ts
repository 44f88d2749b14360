// The views that show one host at a time: the library, usage, agents and accounts of
// this machine or of a host of the user's list. Each host's verbs go to its daemon
// through the desktop shell's link to it (`requestOn`: src-tauri/src/link.rs
// `request_on`), so a host's library, accounts and agents are the host's own, as
// `weft --host NAME library|accounts|agents` shows them; their sessions come back named
// `HOST/agent:id`, which every other verb routes by itself. Usage is also offered over
// every host together ("All hosts": the rows of each summed by their key).
//
// A store per host, made on first use and kept: switching back shows what was loaded.
// This machine's are the window's own (the sidebar and the composer use them).
import type { UsageBy, UsageRow } from "../generated";
import { AccountsStore } from "./accounts.svelte";
import { LOCAL } from "./hosts.svelte";
import { LibraryStore } from "./library.svelte";
import type { TerminalClient } from "./terminal/client";
import type { Transport, VerbsOf } from "./transport";

/** The usage view's choice that sums every host. */
export const ALL_HOSTS = "*";

/** The verbs of `transport` as host `host` answers them (this machine's: the transport itself). */
export function onHost(transport: Transport, host: string): VerbsOf {
  if (host === LOCAL || !transport.requestOn) return transport;
  const requestOn = transport.requestOn.bind(transport);
  return {
    sessionVerbsOnly: transport.sessionVerbsOnly,
    request: (request) => requestOn(host, request),
    saveExport: transport.saveExport?.bind(transport),
  };
}

/** Rows of several hosts summed by their key (a day, a model, …), in the order first seen. */
export function sumUsage(lists: readonly UsageRow[][]): UsageRow[] {
  const byKey = new Map<string, UsageRow>();
  for (const rows of lists) {
    for (const r of rows) {
      const had = byKey.get(r.key);
      if (!had) {
        byKey.set(r.key, { ...r, unpricedModels: [...r.unpricedModels], costByModel: r.costByModel.map((c) => ({ ...c })) });
        continue;
      }
      const inputBefore = had.inputTokens + had.cacheReadTokens + had.cacheWriteTokens;
      const inputNow = r.inputTokens + r.cacheReadTokens + r.cacheWriteTokens;
      had.calls += r.calls;
      had.inputTokens += r.inputTokens;
      had.outputTokens += r.outputTokens;
      had.cacheReadTokens += r.cacheReadTokens;
      had.cacheWriteTokens += r.cacheWriteTokens;
      had.costUsd = had.costUsd === null && r.costUsd === null ? null : (had.costUsd ?? 0) + (r.costUsd ?? 0);
      for (const m of r.unpricedModels) if (!had.unpricedModels.includes(m)) had.unpricedModels.push(m);
      for (const c of r.costByModel) {
        const same = had.costByModel.find((x) => x.model === c.model);
        if (same) same.costUsd += c.costUsd;
        else had.costByModel.push({ ...c });
      }
      const input = inputBefore + inputNow;
      had.cacheHitRate = input > 0 ? had.cacheReadTokens / input : null;
    }
  }
  return [...byKey.values()];
}

/** What the usage page reads: one host's library, or every host's summed. */
export type UsageSource = Pick<LibraryStore, "usage" | "blocks" | "error" | "loadUsage" | "loadBlocks">;

/** Usage over every host: each host's rows, and their sums. */
export class AllHostsUsage implements UsageSource {
  usage = $state<UsageRow[]>([]);
  blocks = $state<UsageRow[]>([]);
  /** Each host's rows as last read (a host that could not be read is missing, and named in `error`). */
  byHost = $state<Record<string, UsageRow[]>>({});
  error = $state<string | null>(null);

  constructor(private readonly views: HostViews) {}

  async loadUsage(by: UsageBy = "day"): Promise<void> {
    const hosts = this.views.names;
    const stores = hosts.map((h) => this.views.library(h));
    await Promise.all(stores.map((s) => s.loadUsage(by)));
    const failed = hosts.filter((_, i) => stores[i].error);
    this.error = failed.length ? `Usage of ${failed.join(", ")} could not be read: ${stores[hosts.indexOf(failed[0])].error}` : null;
    const byHost: Record<string, UsageRow[]> = {};
    hosts.forEach((h, i) => {
      if (!stores[i].error) byHost[h] = stores[i].usage;
    });
    const total = sumUsage(Object.values(byHost));
    if (JSON.stringify(total) !== JSON.stringify(this.usage)) this.usage = total;
    if (JSON.stringify(byHost) !== JSON.stringify(this.byHost)) this.byHost = byHost;
  }

  async loadBlocks(now = Date.now()): Promise<void> {
    const stores = this.views.names.map((h) => this.views.library(h));
    await Promise.all(stores.map((s) => s.loadBlocks(now)));
    const blocks = stores.flatMap((s) => s.blocks).sort((a, b) => (a.block?.start ?? 0) - (b.block?.start ?? 0));
    if (JSON.stringify(blocks) !== JSON.stringify(this.blocks)) this.blocks = blocks;
  }
}

/** Each host's library and accounts stores, and the hosts to pick from. */
export class HostViews {
  /** The hosts of the user's list (this machine's first); only `local` where there are none. */
  names = $state<string[]>([LOCAL]);
  private libraries = new Map<string, LibraryStore>();
  private accountStores = new Map<string, AccountsStore>();
  private all: AllHostsUsage | null = null;

  constructor(
    private readonly transport: Transport,
    local: { library: LibraryStore; accounts: AccountsStore },
    private readonly terminals: TerminalClient | null = null,
  ) {
    this.libraries.set(LOCAL, local.library);
    this.accountStores.set(LOCAL, local.accounts);
  }

  /** Whether there is a host to pick at all (a list, and a shell that reaches them). */
  get picking(): boolean {
    return this.names.length > 1;
  }

  /** Reads the host list again (the shell's; nothing where there is none). */
  async refresh(): Promise<void> {
    if (!this.transport.listHosts || !this.transport.requestOn) return;
    try {
      const list = await this.transport.listHosts();
      this.names = [LOCAL, ...list.map((h) => h.name)];
    } catch {
      // The pickers then offer this machine only; Settings → Hosts says why.
    }
  }

  /** Host `host`'s library (its sessions, search, transcripts, usage). */
  library(host: string): LibraryStore {
    let store = this.libraries.get(host);
    if (!store) {
      store = new LibraryStore(onHost(this.transport, host));
      this.libraries.set(host, store);
    }
    return store;
  }

  /** Host `host`'s accounts, and through them its agents. */
  accounts(host: string): AccountsStore {
    let store = this.accountStores.get(host);
    if (!store) {
      store = new AccountsStore(onHost(this.transport, host), this.terminals);
      this.accountStores.set(host, store);
    }
    return store;
  }

  /** Usage of host `host`, or of every host summed ([`ALL_HOSTS`]). */
  usage(host: string): UsageSource {
    if (host !== ALL_HOSTS) return this.library(host);
    this.all ??= new AllHostsUsage(this);
    return this.all;
  }
}
