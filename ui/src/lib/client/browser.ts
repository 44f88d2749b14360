// The UI in a plain browser, served by the daemon: the token and an optional workspace
// come in the page's address fragment (`#token=…&workspace=/path`), which is then taken
// out of the address bar (and out of the history); the token is kept for this tab only,
// so a reload still connects. There is no shell around the page: what the app would
// say about itself comes from the daemon's status, recent workspaces live in
// localStorage, there is no folder dialog (the path is typed) and no log to open.
import type { Shell } from "./link";

const TOKEN_KEY = "weft.token";
/** A phone's paired token (from `weft serve --print-token`'s link, which carries the
 * server's key fingerprint): kept past the tab, so the page added to the home screen
 * connects. Revoked with `weft tokens revoke NAME`. */
const PAIRED_KEY = "weft.pairedToken";
/** The fingerprint the pairing link gave, for the page to compare (TlsFingerprint). */
export const PIN_KEY = "weft.pin";
const RECENTS_KEY = "weft.recentWorkspaces";
const RECENTS_MAX = 10;

export interface PageStart {
  token: string | null;
  workspace: string | null;
}

/**
 * Reads the fragment's token and workspace, removes the fragment from the address bar,
 * and remembers the token in `session` (sessionStorage) for a reload.
 */
export function takeFragment(
  location: Pick<Location, "hash" | "pathname" | "search">,
  history: Pick<History, "replaceState">,
  session: Pick<Storage, "getItem" | "setItem">,
  device?: Pick<Storage, "getItem" | "setItem">,
): PageStart {
  const kept = () => session.getItem(TOKEN_KEY) ?? device?.getItem(PAIRED_KEY) ?? null;
  // A place's address (`#/inbox`, `#/s/<key>`…) is the window's, kept for the router.
  if (location.hash.startsWith("#/")) return { token: kept(), workspace: null };
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const token = params.get("token");
  const workspace = params.get("workspace");
  const pin = params.get("fp");
  if (location.hash) history.replaceState(null, "", `${location.pathname}${location.search}`);
  if (token) session.setItem(TOKEN_KEY, token);
  if (token && pin && device) {
    device.setItem(PAIRED_KEY, token);
    device.setItem(PIN_KEY, pin);
  }
  return { token: token ?? kept(), workspace: workspace || null };
}

export function browserShell(start: PageStart, storage: Pick<Storage, "getItem" | "setItem">): Shell {
  const recents = (): string[] => {
    try {
      const list: unknown = JSON.parse(storage.getItem(RECENTS_KEY) ?? "[]");
      return Array.isArray(list) ? list.filter((p): p is string => typeof p === "string") : [];
    } catch {
      return [];
    }
  };
  return {
    async appInfo(request) {
      const status = await request({ type: "daemonStatus" });
      return { version: status.version, stateDir: status.home, logPath: null, initialWorkspace: start.workspace };
    },
    recentWorkspaces: async () => recents(),
    openUrl: async (url) => {
      window.open(url, "_blank", "noopener,noreferrer");
    },
    async addRecentWorkspace(path) {
      const list = [path, ...recents().filter((p) => p !== path)].slice(0, RECENTS_MAX);
      storage.setItem(RECENTS_KEY, JSON.stringify(list));
      return list;
    },
    async removeRecentWorkspace(path) {
      const list = recents().filter((p) => p !== path);
      storage.setItem(RECENTS_KEY, JSON.stringify(list));
      return list;
    },
  };
}
