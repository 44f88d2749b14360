// A link carries the wire messages of crates/protocol between the window and the
// daemon; `WeftClient` (client.ts) does everything else (request ids, replies and
// errors, patches, resyncs, terminal frames) the same way over any link. Two exist:
// the desktop shell's IPC (tauri.ts) and a WebSocket (websocket.ts).
import type { ClientMessage, ServerMessage, Welcome } from "../../generated";
import type { AppInfo, Requester, WindowCommands } from "../transport";

/** What a link reports to its client. */
export interface LinkEvents {
  /** A JSON message from the daemon: a reply or error to a request, a patch, a resync, a closing. */
  message(message: ServerMessage): void;
  /** A binary frame (terminal output, `[1][kind][offset][key length][key][payload]`). */
  frame(bytes: Uint8Array): void;
  /** The connection dropped: requests in flight get no answer. `reconnecting`: the link retries. */
  down(reason: string, reconnecting: boolean): void;
  /** A new connection is up after `down`, its hello answered; it holds no subscription yet. */
  up(welcome: Welcome): void;
}

export interface Link {
  /**
   * The link itself subscribes its connection to every session's patches (the desktop
   * shell does, on each connection it makes); otherwise the client sends `subscribeAll`.
   */
  readonly subscribesAll?: boolean;
  /** Connects and says hello; resolves to the daemon's Welcome. Called once. */
  connect(events: LinkEvents): Promise<Welcome>;
  /**
   * Sends one request; its reply (or error) comes back as a message carrying its id.
   * Throws when the link is down.
   */
  send(message: ClientMessage): void;
}

/** Sends one request to the daemon; resolves to its result, rejects with a VerbError. */
export type { Requester };

/**
 * What only the surface around the UI knows: who it is, where recent workspaces are
 * kept, whether there is a folder dialog and a log to open.
 */
export interface Shell extends WindowCommands {
  /** `request` reaches the daemon, for a shell that learns about itself from it. */
  appInfo(request: Requester): Promise<AppInfo>;
}
