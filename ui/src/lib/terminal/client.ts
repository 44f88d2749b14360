// What a terminal pane needs from the kernel: open or attach a session's agent TUI (its
// frames then arrive for that session on the window's one connection), type, resize,
// detach, close. `WeftClient` (../client/client.ts) implements it over any link.
import type { Frame } from "./stream";

export type FrameHandler = (frame: Frame) => void;

export interface TerminalClient {
  /** Opens the session's terminal (or attaches to the one open) and sends its frames to `onFrame`. */
  open(
    args: { sessionKey?: string; agent?: string; workdir?: string; cols: number; rows: number },
    onFrame: FrameHandler,
  ): Promise<{ sessionKey: string }>;
  /** Attaches to an open terminal: a screen frame, then live output, to `onFrame`. */
  attach(sessionKey: string, onFrame: FrameHandler): Promise<void>;
  /** Stops the frames; the terminal goes on running. */
  detach(sessionKey: string): Promise<void>;
  write(sessionKey: string, data: string): Promise<void>;
  resize(sessionKey: string, cols: number, rows: number): Promise<void>;
  /** Ends the terminal (its program is killed). */
  close(sessionKey: string): Promise<void>;
}
