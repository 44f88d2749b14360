// What the command palette offers: every action by name, grouped, with its shortcut.
// The window builds the list from its state each time the palette opens (so an action
// that cannot run now is not offered), and the help sheet lists the shortcuts.

export interface Action {
  /** Stable id (tests and the help sheet find actions by it). */
  id: string;
  label: string;
  group: string;
  /** The keyboard shortcut, as shown. */
  keys?: string;
  /** More words it is found by. */
  keywords?: string[];
  run: () => void | Promise<void>;
}

/** The palette's groups, in the order they are shown. */
export const GROUPS = ["Session", "Go to", "Agent", "Model", "Effort", "Account", "Settings", "Sessions", "Window"] as const;

/** Groups the actions in GROUPS order (unknown groups last), keeping each group's order. */
export function grouped(actions: Action[]): { group: string; actions: Action[] }[] {
  const out = new Map<string, Action[]>();
  for (const g of GROUPS) out.set(g, []);
  for (const a of actions) {
    const list = out.get(a.group) ?? [];
    list.push(a);
    out.set(a.group, list);
  }
  return [...out].filter(([, list]) => list.length > 0).map(([group, list]) => ({ group, actions: list }));
}
