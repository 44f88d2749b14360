// The window's keyboard shortcuts, in one table (ui/TESTING.md lists them too).
export interface Shortcut {
  keys: string;
  does: string;
  match: (e: KeyboardEvent) => boolean;
}

const mod = (e: KeyboardEvent) => e.ctrlKey || e.metaKey;

export const SHORTCUTS: Record<string, Shortcut> = {
  newSession: { keys: "Ctrl+N", does: "new session", match: (e) => mod(e) && !e.shiftKey && e.key.toLowerCase() === "n" },
  openWorkspace: { keys: "Ctrl+O", does: "open a workspace folder", match: (e) => mod(e) && e.key.toLowerCase() === "o" },
  search: { keys: "Ctrl+K", does: "search sessions and transcripts", match: (e) => mod(e) && e.key.toLowerCase() === "k" },
  find: { keys: "Ctrl+F", does: "find in this session", match: (e) => mod(e) && !e.shiftKey && e.key.toLowerCase() === "f" },
  focusComposer: { keys: "Ctrl+L", does: "focus the composer", match: (e) => mod(e) && e.key.toLowerCase() === "l" },
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
  stop: { keys: "Esc", does: "stop the running turn", match: (e) => e.key === "Escape" },
};

export function matchShortcut(e: KeyboardEvent): string | null {
  for (const [name, s] of Object.entries(SHORTCUTS)) if (s.match(e)) return name;
  return null;
}
