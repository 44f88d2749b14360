// The terminal commands over Tauri IPC (src-tauri/src/terminal.rs).
import { Channel, invoke } from "@tauri-apps/api/core";
import { VerbError } from "../transport";

export type FrameHandler = (message: ArrayBuffer | Uint8Array | number[]) => void;

export interface TerminalClient {
  open(args: { sessionKey?: string; agent?: string; workdir?: string; cols: number; rows: number }, onFrame: FrameHandler): Promise<{ sessionKey: string }>;
  attach(sessionKey: string, onFrame: FrameHandler): Promise<void>;
  write(sessionKey: string, data: string): Promise<void>;
  resize(sessionKey: string, cols: number, rows: number): Promise<void>;
  close(sessionKey: string): Promise<void>;
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw new VerbError(error);
  }
}

function channel(onFrame: FrameHandler): Channel<ArrayBuffer> {
  const ch = new Channel<ArrayBuffer>();
  ch.onmessage = onFrame;
  return ch;
}

export function tauriTerminalClient(): TerminalClient {
  return {
    open: (args, onFrame) => call("terminal_open", { ...args, onOutput: channel(onFrame) }),
    attach: (sessionKey, onFrame) => call("terminal_attach", { sessionKey, onOutput: channel(onFrame) }),
    write: (sessionKey, data) => call("terminal_write", { sessionKey, data }),
    resize: (sessionKey, cols, rows) => call("terminal_resize", { sessionKey, cols, rows }),
    close: (sessionKey) => call("terminal_close", { sessionKey }),
  };
}
