// The sidebar as one flat list of rows (workspace heads, their sessions, transcript hits)
// so it can be virtualized: thousands of sessions draw only the rows near the viewport.
import type { LibraryHit, LibrarySession, SearchHit, SessionInfo } from "../generated";
import type { WorktreeGroup } from "./worktrees.svelte";

export type SidebarRow =
  | { key: string; kind: "workspace"; workdir: string; collapsed: boolean; count: number }
  | { key: string; kind: "session"; session: SessionInfo; nested?: boolean }
  | { key: string; kind: "worktree"; worktree: WorktreeGroup }
  | { key: string; kind: "native"; session: LibrarySession }
  | { key: string; kind: "label"; text: string }
  | { key: string; kind: "archived"; count: number; open: boolean }
  | { key: string; kind: "hits" }
  | { key: string; kind: "hit"; hit: SearchHit }
  | { key: string; kind: "native-hit"; hit: LibraryHit }
  | { key: string; kind: "empty"; text: string };

/**
 * The rows, in order. `natives` are the agents' own sessions (the library's `origin:
 * native`): each under its workspace after Weft's sessions there, a workspace that only
 * they know getting a head of its own after the others; while searching only those
 * whose title, agent or folder matches show. One already a Weft session is not repeated.
 * `nativeHits` (their transcripts' matches) follow Weft's transcript hits. A workspace
 * the user removed (`hidden`) stays off the list though agents' sessions ran there,
 * as Weft's own do; while searching they show again. `archived` sessions follow under
 * one Archived head, listed when `archivedOpen` (or while searching).
 */
export function sidebarRows(
  groups: { workdir: string; sessions: SessionInfo[]; worktrees?: WorktreeGroup[] }[],
  hits: SearchHit[],
  search: string,
  natives: LibrarySession[] = [],
  nativeHits: LibraryHit[] = [],
  hidden: readonly string[] = [],
  collapsed: ReadonlySet<string> = new Set(),
  archived: SessionInfo[] = [],
  archivedOpen = false,
): SidebarRow[] {
  const q = search.trim().toLowerCase();
  const searching = q !== "";
  const managed = new Set([...groups.flatMap((g) => g.sessions), ...archived].map((s) => s.sessionKey));
  const removed = new Set(hidden);
  const byWorkdir = new Map<string | null, LibrarySession[]>();
  for (const n of natives) {
    if (managed.has(n.sessionKey)) continue;
    if (!searching && n.workdir !== null && removed.has(n.workdir)) continue;
    if (searching && ![n.title, n.agent, n.workdir ?? ""].some((f) => f.toLowerCase().includes(q))) continue;
    const list = byWorkdir.get(n.workdir) ?? [];
    list.push(n);
    byWorkdir.set(n.workdir, list);
  }
  const nativeRows = (list: LibrarySession[] | undefined): SidebarRow[] =>
    (list ?? []).map((session) => ({ key: `n:${session.sessionKey}`, kind: "native", session }));

  const rows: SidebarRow[] = [];
  // A folded workspace shows its head only (while searching, every match shows).
  const folded = (workdir: string) => !searching && collapsed.has(workdir);
  for (const group of groups) {
    const theirs = byWorkdir.get(group.workdir) ?? [];
    const fold = folded(group.workdir);
    const worktrees = group.worktrees ?? [];
    const inWorktrees = worktrees.reduce((n, w) => n + w.sessions.length, 0);
    rows.push({ key: `ws:${group.workdir}`, kind: "workspace", workdir: group.workdir, collapsed: fold, count: group.sessions.length + inWorktrees + theirs.length });
    if (!fold) {
      for (const session of group.sessions) rows.push({ key: `s:${session.sessionKey}`, kind: "session", session });
      rows.push(...nativeRows(theirs));
      // Each worktree's sessions under a head naming it, its branch and how it stands.
      for (const worktree of worktrees) {
        rows.push({ key: `wt:${worktree.path}`, kind: "worktree", worktree });
        for (const session of worktree.sessions) rows.push({ key: `s:${session.sessionKey}`, kind: "session", session, nested: true });
      }
    }
    byWorkdir.delete(group.workdir);
  }
  for (const [workdir, list] of byWorkdir) {
    if (workdir === null) continue;
    const fold = folded(workdir);
    rows.push({ key: `ws:${workdir}`, kind: "workspace", workdir, collapsed: fold, count: list.length });
    if (!fold) rows.push(...nativeRows(list));
  }
  const unknown = byWorkdir.get(null);
  if (unknown?.length) {
    rows.push({ key: "natives:unknown", kind: "label", text: "Folder unknown" });
    rows.push(...nativeRows(unknown));
  }
  if (archived.length > 0) {
    const open = archivedOpen || searching;
    rows.push({ key: "archived", kind: "archived", count: archived.length, open });
    if (open) for (const session of archived) rows.push({ key: `s:${session.sessionKey}`, kind: "session", session });
  }
  const theirs = searching ? nativeHits.filter((h) => !managed.has(h.sessionKey)) : [];
  const anyHits = searching && (hits.length > 0 || theirs.length > 0);
  if (rows.length === 0 && !anyHits) {
    rows.push({ key: "empty", kind: "empty", text: searching ? "No session matches." : "Open a workspace folder to start." });
  }
  if (anyHits) {
    rows.push({ key: "hits", kind: "hits" });
    for (const hit of hits) rows.push({ key: `h:${hit.taskId}`, kind: "hit", hit });
    theirs.forEach((hit, i) => rows.push({ key: `nh:${hit.sessionKey}:${i}`, kind: "native-hit", hit }));
  }
  return rows;
}
