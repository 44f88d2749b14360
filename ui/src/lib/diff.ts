// A line diff for edit tool calls (LCS; large inputs fall back to all-removed then
// all-added, which is still readable and bounded in cost).
import type { JsonValue } from "../generated/serde_json/JsonValue";

export interface DiffLine {
  op: " " | "-" | "+";
  text: string;
}

const MAX_CELLS = 4_000_000;

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head = a.slice(0, start).map((text) => ({ op: " " as const, text }));
  const tail = a.slice(endA).map((text) => ({ op: " " as const, text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  let middle: DiffLine[];
  if (midA.length * midB.length > MAX_CELLS) {
    middle = [...midA.map((text) => ({ op: "-" as const, text })), ...midB.map((text) => ({ op: "+" as const, text }))];
  } else {
    middle = lcsDiff(midA, midB);
  }
  return [...head, ...middle, ...tail];
}

function lcsDiff(a: string[], b: string[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  const table: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: " ", text: a[i] });
      i++;
      j++;
    } else if (table[i + 1][j] >= table[i][j + 1]) {
      out.push({ op: "-", text: a[i++] });
    } else {
      out.push({ op: "+", text: b[j++] });
    }
  }
  while (i < n) out.push({ op: "-", text: a[i++] });
  while (j < m) out.push({ op: "+", text: b[j++] });
  return out;
}

/** An edit's file and its before/after, when a tool call's input is an edit we know. */
export interface EditView {
  path: string | null;
  lines: DiffLine[];
}

function str(v: JsonValue | undefined): string | null {
  return typeof v === "string" ? v : null;
}

/**
 * Recognizes edit-like inputs: Claude's Edit/MultiEdit/Write ({file_path, old_string,
 * new_string} / {edits: [...]} / {content}), Weft's own agent's edit/write ({path,
 * old_text, new_text} / {path, content}), and unified diff text (codex apply_patch).
 */
export function editView(name: string, kind: string, input: JsonValue): EditView | null {
  if (kind !== "edit" && kind !== "write") return null;
  if (typeof input === "string") return { path: null, lines: parseUnified(input) };
  if (!input || typeof input !== "object" || Array.isArray(input)) return null;
  const path = str(input.file_path) ?? str(input.path) ?? str(input.filePath);
  const oldString = str(input.old_string) ?? str(input.oldString) ?? str(input.old_text);
  const newString = str(input.new_string) ?? str(input.newString) ?? str(input.new_text);
  if (oldString !== null && newString !== null) return { path, lines: lineDiff(oldString, newString) };
  if (Array.isArray(input.edits)) {
    const lines: DiffLine[] = [];
    for (const e of input.edits) {
      if (e && typeof e === "object" && !Array.isArray(e)) {
        lines.push(...lineDiff(str(e.old_string) ?? "", str(e.new_string) ?? ""));
      }
    }
    return { path, lines };
  }
  const content = str(input.content);
  if (content !== null) return { path, lines: lineDiff("", content) };
  const patch = str(input.patch) ?? str(input.input) ?? str(input.diff);
  if (patch !== null) return { path, lines: parseUnified(patch) };
  void name;
  return null;
}

function parseUnified(text: string): DiffLine[] {
  return text.split("\n").map((line) => {
    const c = line[0];
    if (c === "+" && !line.startsWith("+++")) return { op: "+", text: line.slice(1) };
    if (c === "-" && !line.startsWith("---")) return { op: "-", text: line.slice(1) };
    return { op: " ", text: line.startsWith(" ") ? line.slice(1) : line };
  });
}
