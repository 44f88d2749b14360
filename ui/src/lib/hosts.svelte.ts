// Other machines in one window. The desktop shell keeps a link to each host of the
// user's list (src-tauri/src/hosts.rs) and names a host's things the way the CLI
// writes them (docs/hosts.md): a session key `HOST/agent:id`, a folder `HOST:/path`.
// This machine's keys (`agent:id`, an agent id never holds `/`) and folders (`/…`)
// are written as they always were, so a name alone says which host it is on; a verb
// naming a host's key or folder goes to that host. Here: reading those names, the
// sidebar's host level, and the host list the Settings page and the folder browser
// show (the shell's hosts commands; absent in a browser).
import type { SessionInfo } from "../generated";
import type { SidebarRow } from "./sidebar-rows";
import type { Transport } from "./transport";

/** This machine, always there. */
export const LOCAL = "local";

/** The host of a session key: `gpu` for `gpu/claude:1f2e`, `local` for `claude:1f2e`. */
export function hostOfKey(key: string): string {
  const slash = key.indexOf("/");
  const colon = key.indexOf(":");
  return slash > 0 && (colon < 0 || slash < colon) ? key.slice(0, slash) : LOCAL;
}

/** The agent of a session key, on whichever host (`claude` for `gpu/claude:1f2e`). */
export function agentOfKey(key: string): string {
  const host = hostOfKey(key);
  const own = host === LOCAL ? key : key.slice(host.length + 1);
  const colon = own.indexOf(":");
  return colon < 0 ? own : own.slice(0, colon);
}

/** A folder's host and its path there: `gpu:/srv/x` → [gpu, /srv/x]; `/srv/x` → [local, /srv/x]. */
export function splitFolder(folder: string): [string, string] {
  const colon = folder.indexOf(":");
  if (folder.startsWith("/") || colon <= 0 || folder[colon + 1] !== "/") return [LOCAL, folder];
  return [folder.slice(0, colon), folder.slice(colon + 1)];
}

/** The folder `path` of `host` as the window names it. */
export function folderOn(host: string, path: string): string {
  return host === LOCAL ? path : `${host}:${path}`;
}

/** A sidebar row naming a host, above its workspaces, shown once more than one host has some. */
export type HostRow = { key: string; kind: "host"; host: string; count: number };

/** Workspace groups with this machine's first, then each host's in the order first seen (stable within a host). */
export function orderByHost<G extends { workdir: string }>(groups: readonly G[]): G[] {
  const hosts: string[] = [LOCAL];
  for (const g of groups) {
    const h = splitFolder(g.workdir)[0];
    if (!hosts.includes(h)) hosts.push(h);
  }
  return hosts.flatMap((h) => groups.filter((g) => splitFolder(g.workdir)[0] === h));
}

/**
 * The sidebar's rows with a head for each host above its workspaces, when workspaces
 * of more than one host are listed (a user without hosts sees no host level). Rows
 * must come from groups in [`orderByHost`]'s order.
 */
export function withHostHeads(rows: readonly SidebarRow[]): (SidebarRow | HostRow)[] {
  const workspaceHosts = rows.flatMap((r) => (r.kind === "workspace" ? [splitFolder(r.workdir)[0]] : []));
  if (new Set(workspaceHosts).size < 2 && !workspaceHosts.some((h) => h !== LOCAL)) return [...rows];
  const out: (SidebarRow | HostRow)[] = [];
  let current: string | null = null;
  for (const r of rows) {
    if (r.kind === "workspace") {
      const h = splitFolder(r.workdir)[0];
      if (h !== current) {
        current = h;
        out.push({ key: `h:${h}`, kind: "host", host: h, count: workspaceHosts.filter((x) => x === h).length });
      }
    }
    out.push(r);
  }
  return out;
}

/** Sessions by host, this machine's first: `{local: 3, gpu: 1}`. */
export function sessionsByHost(sessions: readonly SessionInfo[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of sessions) {
    const h = hostOfKey(s.sessionKey);
    out[h] = (out[h] ?? 0) + 1;
  }
  return out;
}

/** A host of the list and its link, as the shell reports it (src-tauri/src/hosts.rs HostLinkState). */
export interface HostLink {
  name: string;
  destination: string;
  /** Its home folder, as first contact found it. */
  home: string | null;
  connected: boolean;
  /** Why the last attempt to connect failed. */
  error: string | null;
}

/** One host's daemon as `weft hosts status --json` reports it (crates/hosts/src/status.rs). */
export interface HostStatus {
  name: string;
  destination: string;
  reachable: boolean;
  version: string | null;
  sessions: number;
  running: number;
  questions: number;
  agents: { pid: number; agent: string; rssBytes: number }[];
  idleExitSecs: number | null;
  note?: string;
}

/** A host's port forwarded to this machine (crates/hosts/src/forward.rs ForwardState). */
export interface HostForward {
  host: string;
  /** The port on the host. */
  port: number;
  /** The port on this machine's loopback. */
  local: number;
  /** Whether it still listens (its ssh connection is up). */
  listening: boolean;
}

/** The first port of a worktree's range (`40000-40009` → 40000). */
export function firstPort(ports: string | null): number | null {
  const n = Number((ports ?? "").split("-")[0]);
  return Number.isInteger(n) && n > 0 && n < 65536 ? n : null;
}

/**
 * The dev server of a worktree of another host that this window can open here (its host
 * and the first port of its range), or null: a worktree of this machine, ports not listed
 * yet, or a window that cannot forward. The sidebar's worktree row and a remote worktree
 * session's header both ask this, then `openHostPort`.
 */
export function hostPreview(
  t: Pick<Transport, "forwardHostPort">,
  path: string,
  ports: string | null,
): { host: string; port: number } | null {
  const [host] = splitFolder(path);
  const port = firstPort(ports);
  return host !== LOCAL && port !== null && t.forwardHostPort ? { host, port } : null;
}

/**
 * Opens `port` of `host` in this machine's browser: forwarded first through the host's
 * ssh connection, unless it already is and still listens. The local URL.
 */
export async function openHostPort(
  t: Pick<Transport, "hostForwards" | "forwardHostPort" | "openUrl">,
  host: string,
  port: number,
): Promise<string> {
  if (!t.hostForwards || !t.forwardHostPort) throw new Error("this window cannot forward a host's port");
  let forward = (await t.hostForwards()).find((f) => f.host === host && f.port === port && f.listening);
  forward ??= (await t.forwardHostPort(host, String(port), false)).find((f) => f.host === host && f.port === port);
  const url = `http://127.0.0.1:${forward?.local ?? port}/`;
  await t.openUrl?.(url);
  return url;
}

/** The shell's hosts commands (the desktop app's; a browser has none). */
export interface HostCommands {
  listHosts(): Promise<HostLink[]>;
  /** Adds NAME at DESTINATION (anything ssh takes) and makes first contact; the new list. */
  addHost(name: string, destination: string): Promise<HostLink[]>;
  /** Stops Weft there, removes what it installed, forgets the host; the new list. */
  removeHost(name: string): Promise<HostLink[]>;
  hostsStatus(): Promise<HostStatus[]>;
}

/** The host list for the Settings page and the folder browser. */
export class HostsStore {
  list = $state<HostLink[]>([]);
  status = $state<HostStatus[]>([]);
  error = $state<string | null>(null);
  busy = $state<string | null>(null);
  forwards = $state<HostForward[]>([]);
  readonly commands: HostCommands | null;
  private readonly forwarding: Pick<Transport, "hostForwards" | "forwardHostPort">;

  constructor(transport: Partial<HostCommands> | Transport) {
    const t = transport as Partial<HostCommands>;
    const f = transport as Pick<Transport, "hostForwards" | "forwardHostPort">;
    this.forwarding = { hostForwards: f.hostForwards?.bind(transport), forwardHostPort: f.forwardHostPort?.bind(transport) };
    this.commands =
      t.listHosts && t.addHost && t.removeHost && t.hostsStatus
        ? { listHosts: () => t.listHosts!(), addHost: (n, d) => t.addHost!(n, d), removeHost: (n) => t.removeHost!(n), hostsStatus: () => t.hostsStatus!() }
        : null;
  }

  /** Every host's name, this machine's first. */
  get names(): string[] {
    return [LOCAL, ...this.list.map((h) => h.name)];
  }

  private async run<T>(what: string, work: (c: HostCommands) => Promise<T>): Promise<T | null> {
    if (!this.commands) return null;
    this.busy = what;
    this.error = null;
    try {
      return await work(this.commands);
    } catch (e) {
      this.error = e instanceof Error ? e.message : String((e as { message?: unknown })?.message ?? e);
      return null;
    } finally {
      this.busy = null;
    }
  }

  async refresh() {
    const list = await this.run("list", (c) => c.listHosts());
    if (list) this.list = list;
  }

  async add(name: string, destination: string): Promise<boolean> {
    const list = await this.run(`add ${name}`, (c) => c.addHost(name.trim(), destination.trim()));
    if (list) this.list = list;
    else {
      // Added but not reached is still listed: show it, and keep saying why.
      const why = this.error;
      await this.refresh();
      this.error = why;
    }
    return list !== null;
  }

  async remove(name: string) {
    const list = await this.run(`remove ${name}`, (c) => c.removeHost(name));
    if (list) this.list = list;
    else {
      const why = this.error;
      await this.refresh();
      this.error = why;
    }
  }

  async loadStatus() {
    const status = await this.run("status", (c) => c.hostsStatus());
    if (status) this.status = status;
  }

  /** Whether this surface forwards hosts' ports (the desktop app). */
  get forwardsPorts(): boolean {
    return !!(this.forwarding.hostForwards && this.forwarding.forwardHostPort);
  }

  async loadForwards() {
    const list = this.forwarding.hostForwards;
    if (!list) return;
    const forwards = await this.run("forwards", () => list());
    if (forwards) this.forwards = forwards;
  }

  /** Forwards `port` (`PORT` or `PORT:LOCALPORT`) of `host` here; false when it failed (`error` says why). */
  async forward(host: string, port: string): Promise<boolean> {
    const forward = this.forwarding.forwardHostPort;
    if (!forward) return false;
    const forwards = await this.run(`forward ${host}`, () => forward(host, port.trim(), false));
    if (forwards) this.forwards = forwards;
    return forwards !== null;
  }

  async cancelForward(host: string, port: number) {
    const forward = this.forwarding.forwardHostPort;
    if (!forward) return;
    const forwards = await this.run(`cancel ${host}`, () => forward(host, String(port), true));
    if (forwards) this.forwards = forwards;
  }

  /** Where the folder browser starts on `host`: its home when known. */
  home(host: string): string | null {
    return this.list.find((h) => h.name === host)?.home ?? null;
  }
}
