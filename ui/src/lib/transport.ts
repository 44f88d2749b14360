// The UI talks to the kernel through a Transport: the verbs of LoomIO plus the app's
// own few (workspaces, logs), and a stream of patch events. The Tauri implementation
// (tauri-transport.ts) uses invoke + listen; a WebSocket one can be added beside it
// without touching the UI.
import type {
  AgentInfo,
  InteractRequest,
  ModelInfo,
  PatchEvent,
  PromptAccepted,
  PromptRequest,
  SearchHit,
  SessionInfo,
  SkillInfo,
  SnapshotAt,
  SteerOutcome,
  ToolInfo,
  UniversalSnapshot,
  WireError,
} from "../generated";

/** What the shell tells the UI about itself. */
export interface AppInfo {
  version: string;
  stateDir: string;
  logPath: string;
  /** Workspace chosen on the command line or by WEFT_WORKSPACE, if any. */
  initialWorkspace: string | null;
}

export interface Transport {
  prompt(request: PromptRequest): Promise<PromptAccepted>;
  stop(sessionKey: string): Promise<void>;
  steer(sessionKey: string, text: string): Promise<SteerOutcome>;
  interact(request: InteractRequest): Promise<void>;
  getSnapshot(sessionKey: string): Promise<SnapshotAt>;
  getHistory(sessionKey: string): Promise<UniversalSnapshot[]>;
  listSessions(workdir: string | null): Promise<SessionInfo[]>;
  /** Past turns whose prompt or reply contain every word (the last as a prefix). */
  search(query: string, limit?: number): Promise<SearchHit[]>;
  listAgentInfo(): Promise<AgentInfo[]>;
  listModels(agent: string): Promise<ModelInfo[]>;
  listEffort(agent: string): Promise<string[]>;
  listTools(): Promise<ToolInfo[]>;
  listSkills(workdir: string | null): Promise<SkillInfo[]>;

  appInfo(): Promise<AppInfo>;
  recentWorkspaces(): Promise<string[]>;
  /** Remembers `path` as the most recent workspace; returns the new list. */
  addRecentWorkspace(path: string): Promise<string[]>;
  /** Asks the user for a folder; null when cancelled. */
  pickWorkspace(): Promise<string | null>;
  openLog(): Promise<void>;

  /** Every session's patches, in order per session. Returns an unsubscribe function. */
  onPatch(handler: (event: PatchEvent) => void): Promise<() => void>;
  /** Called when the shell dropped patches (it lagged): re-read every open snapshot. */
  onResync(handler: () => void): Promise<() => void>;
}

/** A verb's failure as the UI sees it: the wire code to branch on, and a sentence. */
export class VerbError extends Error {
  readonly code: WireError["code"] | "internal";
  constructor(error: unknown) {
    const wire = asWireError(error);
    super(wire.message);
    this.code = wire.code;
  }
}

export function asWireError(error: unknown): WireError {
  if (error && typeof error === "object" && "code" in error && "message" in error) {
    return error as WireError;
  }
  return { code: "internal", message: error instanceof Error ? error.message : String(error) };
}
