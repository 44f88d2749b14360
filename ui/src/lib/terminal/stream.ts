// The terminal pane's client logic, free of xterm and Tauri so it can be unit-tested.
// Frames come from src-tauri/src/terminal.rs: `[kind u8][offset u64 LE][payload]`;
// kind 0 restores the whole screen (current at `offset`), 1 is output starting at
// `offset`, 2 is the child's exit (payload JSON {code, signal, screen}).

export const FRAME_SCREEN = 0;
export const FRAME_DATA = 1;
export const FRAME_EXIT = 2;

export interface TerminalExit {
  code: number;
  signal: string | null;
  screen: string;
}

export type Frame =
  | { kind: "screen"; offset: number; data: Uint8Array }
  | { kind: "data"; offset: number; data: Uint8Array }
  | { kind: "exit"; offset: number; exit: TerminalExit };

/** Decodes one binary frame; null when it is malformed. */
export function decodeFrame(message: ArrayBuffer | Uint8Array | number[]): Frame | null {
  const bytes =
    message instanceof Uint8Array ? message : message instanceof ArrayBuffer ? new Uint8Array(message) : Uint8Array.from(message);
  if (bytes.length < 9) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const offset = Number(view.getBigUint64(1, true));
  const payload = bytes.subarray(9);
  switch (bytes[0]) {
    case FRAME_SCREEN:
      return { kind: "screen", offset, data: payload };
    case FRAME_DATA:
      return { kind: "data", offset, data: payload };
    case FRAME_EXIT:
      try {
        const exit = JSON.parse(new TextDecoder().decode(payload)) as TerminalExit;
        return { kind: "exit", offset, exit };
      } catch {
        return null;
      }
    default:
      return null;
  }
}

/** What the pane does with a frame. */
export interface Action {
  /** Clear the terminal before writing (a screen restore). */
  reset: boolean;
  /** Bytes to write (possibly empty). */
  write: Uint8Array;
  /** The child ended. */
  exit?: TerminalExit;
}

/**
 * Tracks the stream offset so a re-attach (screen restore, then live) or a batch that
 * overlaps what was already written never duplicates output.
 */
export class TerminalStream {
  /** Bytes of the child's output accounted for so far. */
  offset = -1;
  /** Bytes delivered (screen + output), for throughput figures. */
  received = 0;

  apply(frame: Frame): Action | null {
    if (frame.kind === "screen") {
      this.offset = frame.offset;
      this.received += frame.data.length;
      return { reset: true, write: frame.data };
    }
    if (frame.kind === "exit") {
      return { reset: false, write: new Uint8Array(0), exit: frame.exit };
    }
    // Output before the first screen restore cannot be placed.
    if (this.offset < 0) return null;
    const end = frame.offset + frame.data.length;
    if (end <= this.offset) return null;
    const skip = Math.max(0, this.offset - frame.offset);
    if (frame.offset > this.offset) {
      // A gap: should not happen (the backend re-sends the screen when it lags).
      this.offset = end;
      this.received += frame.data.length;
      return { reset: false, write: frame.data };
    }
    this.offset = end;
    const write = frame.data.subarray(skip);
    this.received += write.length;
    return { reset: false, write };
  }
}

/**
 * Keystrokes in order: one write in flight at a time (the backend handles commands
 * concurrently, so two writes could swap); what is typed meanwhile goes in the next.
 */
export class OrderedWriter {
  private pending = "";
  private busy = false;
  constructor(
    private readonly send: (data: string) => Promise<void>,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  push(data: string): void {
    this.pending += data;
    if (!this.busy) void this.flush();
  }

  private async flush(): Promise<void> {
    this.busy = true;
    while (this.pending) {
      const data = this.pending;
      this.pending = "";
      try {
        await this.send(data);
      } catch (error) {
        this.onError(error);
      }
    }
    this.busy = false;
  }
}
