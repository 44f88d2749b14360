// The window's places and their addresses. Each place is a view in the main area with
// its own fragment (`#/s/<key>`, `#/inbox`, `#/library?q=…`, `#/review`, `#/usage`,
// `#/settings/<tab>`), so back/forward and a reload keep it, in the desktop window and
// in a browser alike.

export const SETTINGS_TABS = ["accounts", "agents", "mcp", "skills", "chat", "hosts", "appearance"] as const;
export type SettingsTab = (typeof SETTINGS_TABS)[number];

export type Place =
  | { view: "session" }
  | { view: "inbox" }
  | { view: "library"; q: string }
  /** With `fanout`: the runs of one fan-out side by side (`#/review?fanout=<id>`). */
  | { view: "review"; fanout?: string }
  | { view: "usage" }
  | { view: "settings"; tab: SettingsTab };

export type PlaceName = Place["view"];

/** Where an address leads: a place, and for a session view the session (null: a new one) and the one beside it. */
export interface Address {
  place: Place;
  session?: string | null;
  beside?: string | null;
}

const isTab = (t: string): t is SettingsTab => (SETTINGS_TABS as readonly string[]).includes(t);

/** Reads a fragment (`#/…`); null for anything that is not one of the window's addresses. */
export function parseAddress(hash: string): Address | null {
  const raw = hash.replace(/^#/, "");
  if (!raw.startsWith("/")) return null;
  const [path, query = ""] = raw.slice(1).split("?", 2);
  const params = new URLSearchParams(query);
  const parts = path.split("/");
  let decoded: string[];
  try {
    decoded = parts.map((p) => decodeURIComponent(p));
  } catch {
    return null;
  }
  const [head, arg] = decoded;
  switch (head) {
    case "":
    case "new":
      return decoded.length <= 1 || (decoded.length === 2 && arg === "") ? { place: { view: "session" }, session: null } : null;
    case "s":
      if (decoded.length !== 2 || !arg) return null;
      return { place: { view: "session" }, session: arg, beside: params.get("with") || null };
    case "review":
      if (decoded.length !== 1) return null;
      return { place: params.get("fanout") ? { view: "review", fanout: params.get("fanout")! } : { view: "review" } };
    case "inbox":
    case "usage":
      return decoded.length === 1 ? { place: { view: head } } : null;
    case "library":
      return decoded.length === 1 ? { place: { view: "library", q: params.get("q") ?? "" } } : null;
    case "settings": {
      const tab = arg ?? "accounts";
      return decoded.length <= 2 && isTab(tab) ? { place: { view: "settings", tab } } : null;
    }
    default:
      return null;
  }
}

/** The fragment of a place (with the session shown, for the session view). */
export function formatAddress(address: Address): string {
  const p = address.place;
  switch (p.view) {
    case "session": {
      if (!address.session) return "#/new";
      const beside = address.beside ? `?with=${encodeURIComponent(address.beside)}` : "";
      return `#/s/${encodeURIComponent(address.session)}${beside}`;
    }
    case "library":
      return p.q ? `#/library?q=${encodeURIComponent(p.q)}` : "#/library";
    case "settings":
      return `#/settings/${p.tab}`;
    case "review":
      return p.fanout ? `#/review?fanout=${encodeURIComponent(p.fanout)}` : "#/review";
    default:
      return `#/${p.view}`;
  }
}

/** The rail's places, in order, with what each is called. */
export const PLACES: { view: PlaceName; label: string; keys: string }[] = [
  { view: "session", label: "Sessions", keys: "Alt+1" },
  { view: "inbox", label: "Inbox", keys: "Alt+2" },
  { view: "library", label: "Library", keys: "Alt+3" },
  { view: "review", label: "Review", keys: "Alt+4" },
  { view: "usage", label: "Usage", keys: "Alt+5" },
  { view: "settings", label: "Settings", keys: "Alt+," },
];

export const SETTINGS_LABELS: Record<SettingsTab, string> = {
  accounts: "Accounts",
  agents: "Agents",
  mcp: "MCP servers",
  skills: "Skills",
  chat: "Chat",
  hosts: "Hosts",
  appearance: "Appearance",
};

/** The default place of a view picked on the rail. */
export function placeOf(view: PlaceName): Place {
  if (view === "library") return { view, q: "" };
  if (view === "settings") return { view, tab: "accounts" };
  return { view } as Place;
}
