// Transport over Tauri IPC: each verb is one `invoke` of the command of the same name
// (src-tauri/src/commands.rs); patches arrive as `weft://patch` events.
import { invoke } from "@tauri-apps/api/core";
import { listen } from "@tauri-apps/api/event";
import { open } from "@tauri-apps/plugin-dialog";
import type { PatchEvent } from "../generated";
import { VerbError, type Transport } from "./transport";

export const PATCH_EVENT = "weft://patch";
export const RESYNC_EVENT = "weft://resync";

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw new VerbError(error);
  }
}

export function tauriTransport(): Transport {
  return {
    prompt: (request) => call("prompt", { request }),
    stop: (sessionKey) => call("stop", { sessionKey }),
    steer: (sessionKey, text) => call("steer", { sessionKey, text }),
    interact: (request) => call("interact", { request }),
    getSnapshot: (sessionKey) => call("get_snapshot", { sessionKey }),
    getHistory: (sessionKey) => call("get_history", { sessionKey }),
    listSessions: (workdir) => call("list_sessions", { workdir }),
    search: (query, limit) => call("search", { query, limit: limit ?? null }),
    listAgentInfo: () => call("list_agent_info"),
    listModels: (agent) => call("list_models", { agent }),
    listEffort: (agent) => call("list_effort", { agent }),
    listTools: () => call("list_tools"),
    listSkills: (workdir) => call("list_skills", { workdir }),
    appInfo: () => call("app_info"),
    recentWorkspaces: () => call("recent_workspaces"),
    addRecentWorkspace: (path) => call("add_recent_workspace", { path }),
    pickWorkspace: async () => {
      const picked = await open({ directory: true, multiple: false, title: "Open a workspace folder" });
      return typeof picked === "string" ? picked : null;
    },
    openLog: () => call("open_log"),
    onPatch: (handler) => listen<PatchEvent>(PATCH_EVENT, (e) => handler(e.payload)),
    onResync: (handler) => listen(RESYNC_EVENT, () => handler()),
  };
}

/** True inside the Tauri WebView. */
export function inTauri(): boolean {
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window;
}
