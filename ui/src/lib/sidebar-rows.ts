// The sidebar as one flat list of rows (workspace heads, their sessions, transcript hits)
// so it can be virtualized: thousands of sessions draw only the rows near the viewport.
import type { SearchHit, SessionInfo } from "../generated";

export type SidebarRow =
  | { key: string; kind: "workspace"; workdir: string }
  | { key: string; kind: "session"; session: SessionInfo }
  | { key: string; kind: "hits" }
  | { key: string; kind: "hit"; hit: SearchHit }
  | { key: string; kind: "empty"; text: string };

export function sidebarRows(
  groups: { workdir: string; sessions: SessionInfo[] }[],
  hits: SearchHit[],
  search: string,
): SidebarRow[] {
  const rows: SidebarRow[] = [];
  for (const group of groups) {
    rows.push({ key: `ws:${group.workdir}`, kind: "workspace", workdir: group.workdir });
    for (const session of group.sessions) rows.push({ key: `s:${session.sessionKey}`, kind: "session", session });
  }
  const searching = search.trim() !== "";
  if (groups.length === 0 && !(searching && hits.length)) {
    rows.push({ key: "empty", kind: "empty", text: searching ? "No session matches." : "Open a workspace folder to start." });
  }
  if (searching && hits.length) {
    rows.push({ key: "hits", kind: "hits" });
    for (const hit of hits) rows.push({ key: `h:${hit.taskId}`, kind: "hit", hit });
  }
  return rows;
}
