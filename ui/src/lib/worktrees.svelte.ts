// The git worktrees Weft made for sessions: where each belongs in the sidebar (under the
// repository's workspace, not as a workspace of its own), its branch and how it stands
// (ahead/behind its base, uncommitted changes), and whether a workspace's new sessions
// start in a worktree of their own.
import type { MergeMode, MergeOutcome, SessionInfo, WorktreeInfo } from "../generated";
import type { Transport } from "./transport";

const NEW_IN_WORKTREE_KEY = "weft.newInWorktree";
/** `listWorktrees` runs git in every worktree: not more often than this. */
const REFRESH_EVERY_MS = 3000;

/** A worktree and the sessions in it, as the sidebar lists them under the repository. */
export type WorktreeGroup = {
  name: string;
  path: string;
  branch: string | null;
  base: string;
  /** Commits on its branch not on its base, and the other way. */
  ahead: number;
  behind: number;
  dirty: boolean;
  /** False while the daemon has not listed it yet (its state is then unknown). */
  known: boolean;
  /** Its ports (`first-last`, its `WEFT_PORT_RANGE`), once listed. */
  ports: string | null;
  sessions: SessionInfo[];
};

/** Whether `path` is `root` or inside it. */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/**
 * Sorts sessions in worktrees into groups, one per worktree, in the order the worktrees
 * were listed (sessions keep their order). A session names its worktree (`worktree`);
 * its state comes from `infos`, when listed.
 */
export function groupByWorktree(sessions: SessionInfo[], infos: readonly WorktreeInfo[]): WorktreeGroup[] {
  const groups = new Map<string, WorktreeGroup>();
  for (const s of sessions) {
    const wt = s.worktree;
    if (!wt) continue;
    let g = groups.get(wt.path);
    if (!g) {
      const info = infos.find((i) => i.path === wt.path);
      g = {
        name: wt.name,
        path: wt.path,
        branch: info?.branch ?? wt.branch,
        base: wt.base,
        ahead: info?.ahead ?? 0,
        behind: info?.behind ?? 0,
        dirty: info?.dirty ?? false,
        known: info !== undefined,
        ports: info?.ports ?? null,
        sessions: [],
      };
      groups.set(wt.path, g);
    }
    g.sessions.push(s);
  }
  const order = (g: WorktreeGroup) => {
    const i = infos.findIndex((info) => info.path === g.path);
    return i < 0 ? infos.length : i;
  };
  return [...groups.values()].sort((a, b) => order(a) - order(b));
}

/** A workspace in the sidebar: its own sessions, and its worktrees' with theirs. */
export type WorkspaceGroup = { workdir: string; sessions: SessionInfo[]; worktrees: WorktreeGroup[] };

/**
 * Workspaces to show: recent ones first, then any folder a session ran in. A session
 * in a worktree Weft made is listed under its repository's workspace, in a group of
 * its worktree's, and the worktree is no workspace of its own. `shown` are the sessions
 * the filters leave; a removed (`hidden`) workspace's sessions still show while searching.
 */
export function workspaceGroups(o: {
  all: readonly SessionInfo[];
  shown: readonly SessionInfo[];
  workspaces: readonly string[];
  hidden: readonly string[];
  searching: boolean;
  worktrees: WorktreeStore;
}): WorkspaceGroup[] {
  const home = (s: SessionInfo) => (s.worktree ? o.worktrees.repoOf(s.worktree.path) : null) ?? s.workdir;
  const order = o.workspaces.filter((w) => !o.worktrees.isWorktree(w));
  for (const s of o.all) if (!s.archived && !order.includes(home(s))) order.push(home(s));
  return order
    .filter((workdir) => o.searching || !o.hidden.includes(workdir))
    .map((workdir) => {
      const here = o.shown.filter((s) => home(s) === workdir);
      const inWorktrees = here.filter((s) => s.worktree && s.workdir !== workdir);
      return { workdir, sessions: here.filter((s) => !inWorktrees.includes(s)), worktrees: groupByWorktree(inWorktrees, o.worktrees.list) };
    })
    .filter((g) => g.sessions.length + g.worktrees.length > 0 || (!o.searching && o.workspaces.includes(g.workdir)));
}

/** The worktrees the daemon lists, and the per-workspace "new sessions in a worktree". */
export class WorktreeStore {
  list = $state.raw<WorktreeInfo[]>([]);
  /** Workspaces whose new sessions start in a worktree of their own by default. */
  private defaults = $state<string[]>(readDefaults());
  private last = 0;
  private pending: Promise<void> | null = null;
  private trailing: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly transport: Transport) {}

  /**
   * Re-reads the list, at most every few seconds unless `force`d (a worktree made or
   * removed); nothing to read while no session runs in a worktree.
   */
  refresh(sessions: readonly SessionInfo[], force = false): Promise<void> {
    if (!force && !sessions.some((s) => s.worktree)) return Promise.resolve();
    if (this.pending) return this.pending;
    const wait = this.last + REFRESH_EVERY_MS - Date.now();
    if (!force && wait > 0) {
      // Read once the few seconds are up, so the state a turn just left (a dirty
      // worktree) shows without waiting for the next change of the session list.
      this.trailing ??= setTimeout(() => {
        this.trailing = null;
        void this.refresh(sessions, true);
      }, wait);
      return Promise.resolve();
    }
    this.last = Date.now();
    this.pending = this.transport
      .request({ type: "listWorktrees" })
      .then((list) => {
        this.list = list;
      })
      // The list is a nicety over the sessions' own worktree fields: a daemon that
      // cannot list them leaves the sidebar as it was, and says so in its log.
      .catch(() => {})
      .finally(() => {
        this.pending = null;
      });
    return this.pending;
  }

  /**
   * Lands a session's branch: commits what its worktree holds (with `message`), then
   * merges it into its base as `mode` says, or pushes it (and opens a pull request).
   * Conflicts come back in the outcome, the base left as it was; a refusal (the base
   * has another branch checked out, uncommitted changes) throws its reason.
   */
  async merge(sessionKey: string, mode: MergeMode, message: string, push = false, pr = false): Promise<MergeOutcome> {
    const outcome = await this.transport.request({ type: "mergeSession", sessionKey, mode, message, push, pr });
    await this.refresh([], true);
    return outcome;
  }

  /** The repository folder a worktree Weft made belongs to (null: not one of ours). */
  repoOf(path: string): string | null {
    return this.list.find((w) => within(path, w.path))?.repo ?? null;
  }

  /** Whether `workdir` is a worktree Weft made (so not a workspace of its own). */
  isWorktree(workdir: string): boolean {
    return this.list.some((w) => w.path === workdir);
  }

  /** New sessions in `workspace` start in a new worktree unless the user says otherwise. */
  newInWorktree(workspace: string | null): boolean {
    return workspace !== null && this.defaults.includes(workspace);
  }

  setNewInWorktree(workspace: string, on: boolean) {
    const rest = this.defaults.filter((w) => w !== workspace);
    this.defaults = on ? [...rest, workspace] : rest;
    globalThis.localStorage?.setItem(NEW_IN_WORKTREE_KEY, JSON.stringify(this.defaults));
  }
}

function readDefaults(): string[] {
  try {
    const list: unknown = JSON.parse(globalThis.localStorage?.getItem(NEW_IN_WORKTREE_KEY) ?? "[]");
    return Array.isArray(list) ? list.filter((p): p is string => typeof p === "string") : [];
  } catch {
    return [];
  }
}

/**
 * The commit message a merge proposes: the session's title, then what each turn was
 * asked (the user edits it before merging).
 */
export function proposeMessage(title: string, prompts: readonly string[]): string {
  const asked = prompts.map((p) => p.trim().split("\n")[0]).filter((p) => p !== "");
  const subject = (title.trim() || asked[0] || "Changes from a Weft session").split("\n")[0].slice(0, 72);
  const body = asked.filter((p) => p !== subject).map((p) => `- ${p.length > 100 ? `${p.slice(0, 99)}…` : p}`);
  return body.length > 0 ? `${subject}\n\n${body.join("\n")}\n` : `${subject}\n`;
}

/**
 * The prompt that hands a merge's conflicts to the session's agent: the files and the
 * blocks git marked in each, and what to do (bring the base in and resolve).
 */
export function conflictPrompt(outcome: MergeOutcome): string {
  const files = outcome.conflicts
    .map((c) => `### ${c.path}\n${c.hunks.map((h) => "```\n" + h.replace(/\n$/, "") + "\n```").join("\n")}`)
    .join("\n\n");
  return (
    `Merging ${outcome.branch} into ${outcome.base} conflicts in ${outcome.conflicts.length} file${outcome.conflicts.length === 1 ? "" : "s"} ` +
    `(the merge was aborted; ${outcome.base} is unchanged):\n\n${files}\n\n` +
    `Merge ${outcome.base} into this branch, resolve each conflict keeping the intent of both sides, run the tests, and commit.`
  );
}

/** One run of a fan-out: an agent, and the model it is asked for (null: its default). */
export type FanoutTarget = { agent: string; model: string | null };

/** The worktree names of a fan-out's runs (`fan-<group>-<n>-<agent>`, as `weft run --fanout` makes them). */
export function fanoutName(group: string, index: number, agent: string): string {
  return `fan-${group}-${index + 1}-${agent.toLowerCase().replace(/[^a-z0-9]/g, "-")}`;
}

/** The fan-out a worktree name belongs to (null: none). */
export function fanoutGroup(worktreeName: string | undefined | null): string | null {
  return /^fan-([0-9a-f]{6})-\d+-/.exec(worktreeName ?? "")?.[1] ?? null;
}

/**
 * Sends one prompt to each target at once, each a new session in a worktree of its own
 * from the workspace's HEAD; the fan-out's group id, the sessions started, and why any
 * target did not start (when none did, its error is thrown).
 */
export async function fanOut(
  transport: Transport,
  workdir: string,
  prompt: string,
  targets: readonly FanoutTarget[],
  attachments: string[] = [],
): Promise<{ group: string; sessions: string[]; errors: string[] }> {
  const bytes = new Uint8Array(3);
  globalThis.crypto.getRandomValues(bytes);
  const group = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  const results = await Promise.allSettled(
    targets.map((t, i) =>
      transport.request({
        type: "prompt",
        prompt,
        agent: t.agent,
        sessionKey: null,
        workdir,
        model: t.model,
        effort: null,
        attachments,
        worktree: { name: fanoutName(group, i, t.agent) },
      }),
    ),
  );
  const sessions = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.sessionKey] : []));
  const failed = results.flatMap((r, i) => (r.status === "rejected" ? [{ target: targets[i], reason: r.reason as unknown }] : []));
  if (failed.length > 0 && sessions.length === 0) throw failed[0].reason;
  const errors = failed.map((f) => `${f.target.agent}: ${f.reason instanceof Error ? f.reason.message : String(f.reason)}`);
  return { group, sessions, errors };
}
