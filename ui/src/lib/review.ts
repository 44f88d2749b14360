// The review of a session's changes: its diff split into hunks, "viewed" marks that
// survive the agent's later turns, and review comments sent back as one prompt.
//
// A hunk is known by its file and its lines, not by its position: the `@@` header's
// line numbers shift when the agent changes something above it, so they are left out
// of the key. A file the agent changes again reopens only the hunks whose lines changed.
import type { TurnDiff, TurnFile } from "../generated";

export interface Hunk {
  /** Stable across turns while its lines stay the same (see the module). */
  key: string;
  path: string;
  /** The `@@ -a,b +c,d @@` line. */
  header: string;
  /** The hunk's lines after its header. */
  body: string;
  /** The new file's lines it covers (1-based, inclusive); null for a deletion. */
  lines: { from: number; to: number } | null;
}

export interface ReviewFile {
  path: string;
  change: TurnFile["change"];
  added: number;
  removed: number;
  binary: boolean;
  /** The unified header (`--- a/…`, `+++ b/…`) the hunks go under. */
  head: string;
  hunks: Hunk[];
}

/** 53-bit FNV-1a: short keys for localStorage, collisions negligible at review sizes. */
function hash(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return (h1 >>> 0).toString(36) + (h2 & 0x1fffff).toString(36);
}

const HEADER = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

/** A file's unified diff split into its hunks. */
export function splitHunks(path: string, diff: string): { head: string; hunks: Hunk[] } {
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const head: string[] = [];
  const hunks: Hunk[] = [];
  let header: string | null = null;
  let body: string[] = [];
  const close = () => {
    if (header === null) return;
    const m = HEADER.exec(header);
    const start = m ? Number(m[1]) : 0;
    const count = m && m[2] !== undefined ? Number(m[2]) : 1;
    const text = body.join("\n");
    hunks.push({
      key: `${hash(path)}.${hash(text)}`,
      path,
      header,
      body: text,
      lines: count > 0 ? { from: start, to: start + count - 1 } : null,
    });
  };
  for (const line of lines) {
    if (line.startsWith("@@")) {
      close();
      header = line;
      body = [];
    } else if (header === null) head.push(line);
    else body.push(line);
  }
  close();
  return { head: head.join("\n"), hunks };
}

/** The diff's files with their hunks. */
export function reviewFiles(diff: TurnDiff): ReviewFile[] {
  return diff.files.map((f) => {
    const { head, hunks } = f.hunks ? splitHunks(f.path, f.hunks) : { head: "", hunks: [] };
    return { path: f.path, change: f.change, added: f.added, removed: f.removed, binary: f.binary, head, hunks };
  });
}

/** One hunk as a unified diff of its own (for the diff view). */
export function hunkDiff(file: ReviewFile, hunk: Hunk): string {
  const head = file.head || `--- a/${file.path}\n+++ b/${file.path}`;
  return `${head}\n${hunk.header}\n${hunk.body}\n`;
}

export interface ReviewComment {
  path: string;
  lines: Hunk["lines"];
  /** The hunk it is about, quoted to the agent. */
  quote: string;
  text: string;
}

/** The review's comments as one prompt for the session's agent. */
export function commentsPrompt(comments: readonly ReviewComment[]): string {
  const items = comments.map((c, i) => {
    const where = c.lines ? (c.lines.from === c.lines.to ? `line ${c.lines.from}` : `lines ${c.lines.from}–${c.lines.to}`) : "removed lines";
    return `${i + 1}. ${c.path}, ${where}:\n\`\`\`diff\n${c.quote.replace(/\n$/, "")}\n\`\`\`\n${c.text.trim()}`;
  });
  return `Review comments on your changes. Address each one, then say what you changed:\n\n${items.join("\n\n")}`;
}

/** What the user has reviewed in a session: hunks marked viewed, and the checkpoint
 * they last reviewed up to ("since I last reviewed" starts there). */
export interface ReviewState {
  viewed: string[];
  reviewedAt: string | null;
}

const KEY = (sessionKey: string) => `weft.review.${sessionKey}`;

export function loadReview(sessionKey: string): ReviewState {
  try {
    const raw: unknown = JSON.parse(globalThis.localStorage?.getItem(KEY(sessionKey)) ?? "null");
    if (raw && typeof raw === "object") {
      const r = raw as Partial<ReviewState>;
      return {
        viewed: Array.isArray(r.viewed) ? r.viewed.filter((k): k is string => typeof k === "string") : [],
        reviewedAt: typeof r.reviewedAt === "string" ? r.reviewedAt : null,
      };
    }
  } catch {
    // A damaged entry is a review not started.
  }
  return { viewed: [], reviewedAt: null };
}

/** Keeps the marks of hunks still in `current` (a mark for lines long gone is dropped). */
export function saveReview(sessionKey: string, state: ReviewState, current: readonly ReviewFile[] | null = null) {
  const live = current ? new Set(current.flatMap((f) => f.hunks.map((h) => h.key))) : null;
  const viewed = live ? state.viewed.filter((k) => live.has(k)) : state.viewed;
  globalThis.localStorage?.setItem(KEY(sessionKey), JSON.stringify({ viewed, reviewedAt: state.reviewedAt }));
}
