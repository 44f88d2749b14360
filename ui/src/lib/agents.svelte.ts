// The agents as the Agents view sees them: every agent the kernel knows (listAgentInfo:
// found or not, its version, or why it is not usable) beside the CLIs Weft installs
// (listAgentInstalls: where the daemon finds each binary, or every place it looked,
// and the version Weft is tested with). An install runs npm (as `weft agents install
// NAME` does) in a terminal of the daemon's, whose key the pane then attaches to.
import type { AgentInfo, AgentInstall, ClientRequest, SandboxStatus, ToolInfo } from "../generated";
import type { TerminalClient } from "./terminal/client";
import { requestOrNull, type Reply, type Requester } from "./transport";

/** One row of the Agents view. */
export interface AgentRow {
  id: string;
  name: string;
  info: AgentInfo | null;
  install: AgentInstall | null;
}

export class AgentsStore {
  infos = $state<AgentInfo[]>([]);
  installs = $state<AgentInstall[]>([]);
  /** How Weft's own agent confines its shell commands (the daemon's probe). */
  sandbox = $state<SandboxStatus | null>(null);
  error = $state<string | null>(null);
  /** Each agent's tools as listed (listTools), or why they could not be. */
  tools = $state<Record<string, { tools: ToolInfo[] } | { problem: string }>>({});

  constructor(
    private readonly call: Requester | null,
    readonly terminals: TerminalClient | null,
  ) {}

  get available(): boolean {
    return this.call !== null;
  }

  /** Every agent the kernel knows, then the installable CLIs no agent of it runs. */
  get rows(): AgentRow[] {
    const rows: AgentRow[] = this.infos.map((info) => ({
      id: info.id,
      name: info.name,
      info,
      install: this.installs.find((i) => i.agent === info.id) ?? null,
    }));
    for (const install of this.installs) {
      if (!rows.some((r) => r.install === install)) rows.push({ id: install.agent, name: install.name, info: null, install });
    }
    return rows;
  }

  private run<R extends ClientRequest>(request: R): Promise<Reply<R> | null> {
    return requestOrNull(this.call, request, (message) => (this.error = message));
  }

  async refresh(): Promise<void> {
    const [infos, installs, status] = await Promise.all([
      this.run({ type: "listAgentInfo" }),
      this.run({ type: "listAgentInstalls" }),
      this.run({ type: "daemonStatus" }),
    ]);
    if (infos) this.infos = infos;
    if (installs) this.installs = installs;
    if (status?.sandbox) this.sandbox = status.sandbox;
  }

  /** Lists `agent`'s own tools in `workdir` (the daemon's default without one); an agent
   * that cannot list them yet says why, shown in its row rather than as the view's error. */
  async listTools(agent: string, workdir: string | null): Promise<void> {
    let problem: string | null = null;
    const tools = await requestOrNull(this.call, { type: "listTools", agent, ...(workdir ? { workdir } : {}) }, (m) => (problem = m));
    this.tools = { ...this.tools, [agent]: tools ? { tools } : { problem: problem ?? "the daemon could not be reached" } };
  }

  /** Starts an install of NAME (npm) in the daemon; the key of its terminal. */
  async install(name: string, cols = 100, rows = 16): Promise<string | null> {
    const attached = await this.run({ type: "installAgent", name, version: null, cols, rows });
    return attached?.sessionKey ?? null;
  }
}

/** How an installed version compares with the tested one, in a few words. */
export function versionText(row: AgentRow): string {
  const found = row.install?.version ?? row.info?.version ?? null;
  const tested = row.install?.testedVersion ?? null;
  if (!found) return tested ? `tested with ${tested}` : "";
  if (!tested) return found;
  return found.includes(tested) ? `${found} (the tested version)` : `${found} (Weft is tested with ${tested})`;
}

/** The sandbox line of the Agents view. */
export function sandboxText(sandbox: SandboxStatus | null): string {
  if (!sandbox) return "Weft's agent: checking which sandbox this machine allows…";
  const name = { bwrap: "bubblewrap", landlock: "Landlock + seccomp" }[sandbox.mechanism];
  return name
    ? `Weft's agent runs shell commands in a ${name} sandbox`
    : "No OS sandbox here: Weft's agent asks before every command that is not provably read-only";
}
