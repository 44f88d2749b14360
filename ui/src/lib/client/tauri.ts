// The desktop window's link: the Tauri shell holds the connection to the daemon,
// subscribed to every session (src-tauri/src/link.rs), and re-makes it when the daemon
// goes away, then sends a resync of everything. The window
// opens it once with `weft_connect` and a Channel that receives every ServerMessage as
// JSON and every terminal frame as bytes; each request is one `weft_request`, which
// resolves to the reply's result or rejects with {code, message}. The shell's own
// commands (app info, recent workspaces, the log, the tray's count, a pop-out window)
// and the dialog plugin's folder picker make the Shell.
import { Channel, invoke } from "@tauri-apps/api/core";
import { getCurrentWebviewWindow } from "@tauri-apps/api/webviewWindow";
import { open } from "@tauri-apps/plugin-dialog";
import { openUrl } from "@tauri-apps/plugin-opener";
import type { ServerMessage, Welcome } from "../../generated";
import { asWireError, VerbError, type AppInfo } from "../transport";
import type { Link, LinkEvents, Shell } from "./link";

/** True inside the Tauri WebView. */
export function inTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}

export function tauriLink(): Link {
  let events: LinkEvents | null = null;
  return {
    subscribesAll: true,
    async connect(listener) {
      events = listener;
      const channel = new Channel<ServerMessage | ArrayBuffer | number[]>();
      channel.onmessage = (message) => {
        if (message instanceof ArrayBuffer) listener.frame(new Uint8Array(message));
        else if (Array.isArray(message)) listener.frame(Uint8Array.from(message));
        else listener.message(message);
      };
      try {
        return await invoke<Welcome>("weft_connect", { onMessage: channel });
      } catch (error) {
        throw new VerbError(error);
      }
    },
    send(message) {
      const { id, ...request } = message;
      const to = events;
      // Before the link is up: offline, as a verb lost with the link is (the link's own
      // banner says so), not a failure of the verb.
      if (!to) throw new VerbError({ code: "internal", message: "not connected yet" }, true);
      invoke("weft_request", { request }).then(
        (result) => to.message({ type: "reply", id, result: result ?? null } as ServerMessage),
        (error: unknown) => to.message({ type: "error", id, error: asWireError(error) }),
      );
    },
  };
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw new VerbError(error);
  }
}

export function tauriShell(): Shell {
  return {
    appInfo: () => call<AppInfo>("app_info"),
    recentWorkspaces: () => call("recent_workspaces"),
    addRecentWorkspace: (path) => call("add_recent_workspace", { path }),
    removeRecentWorkspace: (path) => call("remove_recent_workspace", { path }),
    pickWorkspace: async () => {
      const picked = await open({ directory: true, multiple: false, title: "Open a workspace folder" });
      return typeof picked === "string" ? picked : null;
    },
    openLog: () => call("open_log"),
    // The opener plugin's own command, scoped to http, https and mailto (capabilities/main.json).
    openUrl: async (url) => {
      try {
        await openUrl(url);
      } catch (error) {
        throw new VerbError(error);
      }
    },
    openPath: (path, workdir, reveal) => call("open_path", { path, workdir, reveal }),
    // The shell reads the host's file and opens the save dialog itself: the path it
    // writes to is the dialog's, never the window's (src-tauri/src/commands.rs).
    saveRemoteFile: (path, workdir) => call<string | null>("save_remote_file", { path, workdir }),
    saveWindowSize: () => call("save_window_size"),
    fetchImage: (url) => call<string>("fetch_image", { url }),
    // The shell asks the daemon for the document and opens the save dialog itself: the
    // path never comes from the window (src-tauri/src/commands.rs, `export_session`).
    saveExport: (sessionKey, format) => call("export_session", { sessionKey, format }),
    // The tray icon (src-tauri/src/tray.rs); a count the shell's u32 cannot hold is refused there.
    setInboxCount: (n) => call("set_inbox_count", { count: n }),
    // The tray's Open inbox: the shell emits NAVIGATE to the main window only, and this
    // window listens for events aimed at itself (not every window's, as a global listen would).
    onNavigate: async (handler) => {
      try {
        return await getCurrentWebviewWindow().listen<unknown>(NAVIGATE, (event) => {
          if (typeof event.payload === "string" && event.payload.startsWith("#/")) handler(event.payload);
        });
      } catch (error) {
        throw new VerbError(error);
      }
    },
    // A window of its own at that address (src-tauri/src/popout.rs checks it).
    openWindow: (hash) => call("open_window", { hash }),
    // The hosts list and each host's link (src-tauri/src/hosts.rs).
    listHosts: () => call("hosts_list"),
    addHost: (name, destination) => call("hosts_add", { name, destination }),
    removeHost: (name) => call("hosts_remove", { name }),
    hostsStatus: () => call("hosts_status"),
    hostForwards: () => call("hosts_forwards"),
    forwardHostPort: (name, port, cancel) => call("hosts_forward", { name, port, cancel }),
    // The same command as every verb, told which host's daemon answers it.
    requestOn: (host, request) => call("weft_request", { request, host }),
  };
}

/** The event the shell sends the main window to move it (src-tauri/src/main_window.rs). */
export const NAVIGATE = "weft://navigate";
