// Workspace trust as the window sees it: what each folder grants (its `.weft/` and the
// agents' project files) and whether the user trusted it, kept by the daemon. A folder
// that grants something and was neither trusted nor declined is asked about once, in a
// dialog (TrustDialog.svelte); an untrusted one shows "Restricted" and reopens it.
import { SvelteMap } from "svelte/reactivity";
import type { TrustGrant, WorkspaceTrust } from "../generated";
import { VerbError, type Transport } from "./transport";

/** A folder whose grants do not take effect. */
export function restricted(t: WorkspaceTrust | undefined): boolean {
  return Boolean(t && !t.trusted && t.grants.length > 0);
}

/** The grants by file, in the order the daemon listed them. */
export function byFile(grants: TrustGrant[]): { file: string; grants: TrustGrant[] }[] {
  const files = new Map<string, TrustGrant[]>();
  for (const g of grants) files.set(g.file, [...(files.get(g.file) ?? []), g]);
  return [...files].map(([file, grants]) => ({ file, grants }));
}

const KINDS: Record<string, string> = {
  allowRule: "Allow rule",
  mcpServer: "MCP server",
  hook: "Hook",
  check: "Check",
  permissionMode: "Permission mode",
  setting: "Setting",
  pack: "Pack",
  skill: "Skill",
  worktree: "Worktree setup",
  agentConfig: "Agent setting",
  unreadable: "Unreadable",
};

export const kindLabel = (kind: string) => KINDS[kind] ?? kind;

/**
 * What the decision is kept for, in words: the daemon's scope is `git:<common dir>:<path
 * inside>` (a repository, every worktree of it) or `dir:<folder>`.
 */
export function scopeText(scope: string): string {
  const git = /^git:(.*):([^:]*)$/.exec(scope);
  if (git) {
    const repo = git[1].replace(/\/\.git$/, "");
    return `the repository ${repo}${git[2] ? ` (its folder ${git[2]})` : ""}, in every worktree of it`;
  }
  return "this folder";
}

/** Kinds whose detail is a command line, a server or a rule: shown in monospace. */
export const CODE_KINDS = new Set(["allowRule", "mcpServer", "hook", "check", "worktree"]);

/**
 * The agents that read the folder's own configuration whatever Weft decides (their CLI
 * has no switch for it): the daemon names them in the detail as "AGENT reads: …".
 */
export function agentsReadingAnyway(grants: TrustGrant[]): string[] {
  const agents = new Set<string>();
  for (const g of grants) {
    const m = g.kind === "agentConfig" ? /^(.+?) reads: /.exec(g.detail) : null;
    if (m) agents.add(m[1]);
  }
  return [...agents];
}

export class TrustStore {
  /** The latest answer per folder. */
  readonly byWorkdir = new SvelteMap<string, WorkspaceTrust>();
  /** The folder the dialog asks about, as it was shown. */
  asking = $state<WorkspaceTrust | null>(null);
  /** The folder's files changed after the user first saw them: this is what they grant now. */
  changed = $state(false);
  busy = $state(false);
  error = $state<string | null>(null);
  /** Folders already asked about in this window (a second look is the user's click). */
  private asked = new Set<string>();

  constructor(private readonly transport: Transport) {}

  restricted(workdir: string | null): boolean {
    return workdir !== null && restricted(this.byWorkdir.get(workdir));
  }

  /**
   * Reads `workdir`'s trust; asks (opens the dialog) when it grants something the user
   * has neither trusted nor declined, once per folder per window.
   */
  async check(workdir: string) {
    let t: WorkspaceTrust;
    try {
      t = await this.transport.request({ type: "getWorkspaceTrust", workdir });
    } catch {
      // An older daemon, or a folder that is gone: nothing to ask about.
      return;
    }
    this.byWorkdir.set(workdir, t);
    if (restricted(t) && !t.declined && !this.asked.has(workdir) && !this.asking) this.show(t, false);
  }

  /** Opens the dialog for `workdir` again (the "Restricted" indicator). */
  async open(workdir: string) {
    try {
      this.show(await this.transport.request({ type: "getWorkspaceTrust", workdir }), false);
    } catch (e) {
      this.error = new VerbError(e).message;
    }
  }

  private show(t: WorkspaceTrust, changed: boolean) {
    this.byWorkdir.set(t.workdir, t);
    this.asked.add(t.workdir);
    this.asking = t;
    this.changed = changed;
    this.error = null;
  }

  /** "Trust this folder": trusts exactly what was shown; shown again if it changed since. */
  async trust() {
    await this.decide("trustWorkspace");
  }

  /** "Not now": the folder runs without its grants and is not asked about again until they change. */
  async decline() {
    await this.decide("declineWorkspaceTrust");
  }

  private async decide(type: "trustWorkspace" | "declineWorkspaceTrust") {
    const shown = this.asking;
    if (!shown || this.busy) return;
    this.busy = true;
    try {
      const answer = await this.transport.request({ type, workdir: shown.workdir, hash: shown.hash });
      this.byWorkdir.set(answer.workdir, answer);
      this.asking = null;
      this.changed = false;
    } catch (e) {
      const error = new VerbError(e);
      if (error.code === "needsConfirmation") await this.reshow(shown.workdir, error.message);
      else this.error = error.message;
    } finally {
      this.busy = false;
    }
  }

  /** The folder changed after it was shown: show what it grants now. */
  private async reshow(workdir: string, why: string) {
    try {
      const now = await this.transport.request({ type: "getWorkspaceTrust", workdir });
      if (restricted(now)) this.show(now, true);
      else {
        this.byWorkdir.set(workdir, now);
        this.asking = null;
      }
    } catch {
      this.error = why;
    }
  }
}
