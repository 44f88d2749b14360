// What a key does in the question/permission dialog: Enter the primary choice, Esc
// cancel, 1–9 the n-th choice, and for a permission a / s / d allow once / allow for the
// session / deny. Keys typed into a text answer stay text (only Esc, and Ctrl+Enter to
// answer, reach the dialog then).

export type DialogKind = "permission" | "user-input" | "confirmation" | string;

export type DialogAction =
  | { type: "primary" }
  | { type: "cancel" }
  /** The n-th choice (0-based) of the choices on screen. */
  | { type: "choose"; index: number }
  /** A permission decision by value (`allow`, `allowSession`, `deny`). */
  | { type: "decide"; value: string };

export interface KeyLike {
  key: string;
  ctrlKey?: boolean;
  altKey?: boolean;
  metaKey?: boolean;
  shiftKey?: boolean;
  isComposing?: boolean;
}

/** The letter shown on (and answering) each permission decision. */
export const PERMISSION_KEYS: Record<string, string> = { allow: "a", allowSession: "s", deny: "d" };

export function dialogKey(e: KeyLike, kind: DialogKind, inText: boolean, choices: number): DialogAction | null {
  if (e.isComposing) return null;
  if (e.key === "Escape") return { type: "cancel" };
  if (e.key === "Enter") {
    if (e.shiftKey || e.altKey) return null;
    if (inText && !(e.ctrlKey || e.metaKey)) return null;
    return { type: "primary" };
  }
  if (inText || e.ctrlKey || e.altKey || e.metaKey) return null;
  if (/^[1-9]$/.test(e.key)) {
    const index = Number(e.key) - 1;
    return index < choices ? { type: "choose", index } : null;
  }
  if (kind === "permission") {
    const value = Object.keys(PERMISSION_KEYS).find((v) => PERMISSION_KEYS[v] === e.key.toLowerCase());
    if (value) return { type: "decide", value };
  }
  return null;
}

/** The element Tab should move to, keeping focus inside `root` (a focus trap). */
export function trapTab(root: HTMLElement, from: Element | null, backwards: boolean): HTMLElement | null {
  const focusable = [
    ...root.querySelectorAll<HTMLElement>('button:not([disabled]), input:not([disabled]), textarea:not([disabled]), select:not([disabled]), [tabindex]:not([tabindex="-1"])'),
  ].filter((el) => !el.hidden);
  if (focusable.length === 0) return root;
  const at = from instanceof HTMLElement ? focusable.indexOf(from) : -1;
  if (backwards) return at <= 0 ? focusable[focusable.length - 1] : null;
  return at === -1 || at === focusable.length - 1 ? focusable[0] : null;
}

/** Whether a key event was typed into a terminal pane: its keys are the agent's. */
export function inTerminalPane(e: Event): boolean {
  return e.target instanceof Element && e.target.closest('[data-testid="terminal-pane"]') !== null;
}

/** A view's keydown handler: Esc closes it, except in a terminal pane (the agent's Esc). */
export function closeOnEscape(onclose: () => void): (e: KeyboardEvent) => void {
  return (e) => {
    if (inTerminalPane(e)) return;
    if (e.key === "Escape") {
      e.stopPropagation();
      onclose();
    }
  };
}
