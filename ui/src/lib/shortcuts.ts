// The window's keyboard shortcuts, in one table (the help sheet and ui/TESTING.md list them).
export interface Shortcut {
  keys: string;
  does: string;
  match: (e: KeyboardEvent) => boolean;
}

const mod = (e: KeyboardEvent) => e.ctrlKey || e.metaKey;
const key = (e: KeyboardEvent, k: string) => e.key.toLowerCase() === k;

export const SHORTCUTS: Record<string, Shortcut> = {
  palette: { keys: "Ctrl+K", does: "command palette (Ctrl+Shift+K from a terminal too)", match: (e) => mod(e) && key(e, "k") },
  help: { keys: "?", does: "this list of shortcuts", match: (e) => e.key === "?" && !mod(e) && !e.altKey },
  newSession: { keys: "Ctrl+N", does: "new session", match: (e) => mod(e) && !e.shiftKey && key(e, "n") },
  openWorkspace: { keys: "Ctrl+O", does: "open a workspace folder", match: (e) => mod(e) && key(e, "o") },
  search: { keys: "Ctrl+Shift+F", does: "search sessions and transcripts", match: (e) => mod(e) && e.shiftKey && key(e, "f") },
  find: { keys: "Ctrl+F", does: "find in this session", match: (e) => mod(e) && !e.shiftKey && key(e, "f") },
  focusComposer: { keys: "Ctrl+L", does: "focus the composer", match: (e) => mod(e) && key(e, "l") },
  nextSession: {
    keys: "Ctrl+Tab / Alt+↓",
    does: "next session",
    match: (e) => (e.ctrlKey && e.key === "Tab" && !e.shiftKey) || (e.altKey && e.key === "ArrowDown"),
  },
  prevSession: {
    keys: "Ctrl+Shift+Tab / Alt+↑",
    does: "previous session",
    match: (e) => (e.ctrlKey && e.key === "Tab" && e.shiftKey) || (e.altKey && e.key === "ArrowUp"),
  },
  answerOldest: { keys: "Ctrl+Shift+A", does: "answer the oldest question", match: (e) => mod(e) && e.shiftKey && key(e, "a") },
  stop: { keys: "Esc", does: "stop the running turn", match: (e) => e.key === "Escape" },
};

/** Alt+1…5 and Alt+, go to the rail's places (by `PLACES` order). */
export function placeShortcut(e: KeyboardEvent): number | "settings" | null {
  if (!e.altKey || mod(e) || e.shiftKey) return null;
  if (e.key === ",") return "settings";
  const n = Number(e.code.startsWith("Digit") ? e.code.slice(5) : NaN);
  return n >= 1 && n <= 5 ? n - 1 : null;
}

export function matchShortcut(e: KeyboardEvent): string | null {
  for (const [name, s] of Object.entries(SHORTCUTS)) if (s.match(e)) return name;
  return null;
}

/** Whether the key went to something that takes text (where `?` is a character, not help). */
export function typingInto(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  if (!t) return false;
  return t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName);
}
