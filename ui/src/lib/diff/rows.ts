// A unified diff as rows to draw one at a time: what a virtualized diff view needs (a
// 20,000-line diff drawn whole by diff2html is 20,000 table rows in the DOM, each
// highlighted up front). Unified: one row per line, with its old and new numbers. Split
// (side by side): a hunk's removed and added lines paired left and right in order.
import type { FileChange } from "../../generated";

export type Side = { no: number; text: string; kind: "del" | "add" | "ctx" } | null;

export type DiffRow =
  | { key: string; type: "file"; path: string; kind: FileChange["kind"] }
  | { key: string; type: "hunk"; header: string }
  | { key: string; type: "line"; kind: "del" | "add" | "ctx"; old: number | null; new: number | null; text: string }
  | { key: string; type: "pair"; left: Side; right: Side };

export type Layout = "unified" | "split";

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** How many lines of change and context the diffs hold (what decides the renderer). */
export function lineCount(changes: FileChange[]): number {
  let n = 0;
  for (const c of changes) {
    for (let i = c.diff.indexOf("\n"); i !== -1; i = c.diff.indexOf("\n", i + 1)) n++;
  }
  return n;
}

/** The rows of `changes` in `layout`. */
export function diffRows(changes: FileChange[], layout: Layout): DiffRow[] {
  const rows: DiffRow[] = [];
  changes.forEach((change, f) => {
    rows.push({ key: `f${f}`, type: "file", path: change.path, kind: change.kind });
    let oldNo = 0;
    let newNo = 0;
    let dels: Side[] = [];
    let adds: Side[] = [];
    let n = 0;
    const flush = () => {
      for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
        rows.push({ key: `f${f}p${n++}`, type: "pair", left: dels[i] ?? null, right: adds[i] ?? null });
      }
      dels = [];
      adds = [];
    };
    for (const line of change.diff.split("\n")) {
      if (line.startsWith("--- ") || line.startsWith("+++ ") || line.startsWith("\\")) continue;
      const hunk = HUNK.exec(line);
      if (hunk) {
        if (layout === "split") flush();
        oldNo = Number(hunk[1]);
        newNo = Number(hunk[2]);
        rows.push({ key: `f${f}h${n++}`, type: "hunk", header: line });
        continue;
      }
      if (line === "" || !"+- ".includes(line[0])) continue;
      const text = line.slice(1);
      const kind = line[0] === "+" ? "add" : line[0] === "-" ? "del" : "ctx";
      if (layout === "unified") {
        rows.push({
          key: `f${f}l${n++}`,
          type: "line",
          kind,
          old: kind === "add" ? null : oldNo,
          new: kind === "del" ? null : newNo,
          text,
        });
      } else if (kind === "del") {
        dels.push({ no: oldNo, text, kind });
      } else if (kind === "add") {
        adds.push({ no: newNo, text, kind });
      } else {
        flush();
        rows.push({ key: `f${f}p${n++}`, type: "pair", left: { no: oldNo, text, kind }, right: { no: newNo, text, kind } });
      }
      if (kind !== "add") oldNo++;
      if (kind !== "del") newNo++;
    }
    if (layout === "split") flush();
  });
  return rows;
}
