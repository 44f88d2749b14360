// The terminal pane's client logic, free of xterm and of any link so it can be
// unit-tested. Terminal output reaches a connection as binary frames (crates/protocol
// api.rs `TerminalFrame`): `[1][kind u8][offset u64 LE][key length u16 LE][key][payload]`;
// kind 0 restores the whole screen (current at `offset`), 1 is output starting at
// `offset`, 2 is the child's exit (payload JSON {code, signal, screen}). The key names
// the session, so one connection carries every pane's frames.

/** First byte of a terminal output frame (2 is terminal input, which only goes up). */
export const TAG_TERMINAL = 1;
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

/** A frame and the session whose terminal it belongs to. */
export interface KeyedFrame {
  sessionKey: string;
  frame: Frame;
}

const HEADER = 12;

/** Decodes one binary frame; null when it is malformed or not terminal output. */
export function decodeFrame(message: ArrayBuffer | Uint8Array | number[]): KeyedFrame | null {
  const bytes =
    message instanceof Uint8Array ? message : message instanceof ArrayBuffer ? new Uint8Array(message) : Uint8Array.from(message);
  if (bytes.length < HEADER || bytes[0] !== TAG_TERMINAL) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const offset = Number(view.getBigUint64(2, true));
  const keyLength = view.getUint16(10, true);
  if (bytes.length < HEADER + keyLength) return null;
  let sessionKey: string;
  try {
    sessionKey = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(HEADER, HEADER + keyLength));
  } catch {
    return null;
  }
  const payload = bytes.subarray(HEADER + keyLength);
  switch (bytes[1]) {
    case FRAME_SCREEN:
      return { sessionKey, frame: { kind: "screen", offset, data: payload } };
    case FRAME_DATA:
      return { sessionKey, frame: { kind: "data", offset, data: payload } };
    case FRAME_EXIT:
      try {
        const exit = JSON.parse(new TextDecoder().decode(payload)) as TerminalExit;
        return { sessionKey, frame: { kind: "exit", offset, exit } };
      } catch {
        return null;
      }
    default:
      return null;
  }
}

/** Encodes a frame as the daemon sends it (tests and fakes). */
export function encodeFrame(sessionKey: string, kind: number, offset: number, payload: string | Uint8Array): Uint8Array {
  const key = new TextEncoder().encode(sessionKey);
  const body = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
  const out = new Uint8Array(HEADER + key.length + body.length);
  const view = new DataView(out.buffer);
  out[0] = TAG_TERMINAL;
  out[1] = kind;
  view.setBigUint64(2, BigInt(offset), true);
  view.setUint16(10, key.length, true);
  out.set(key, HEADER);
  out.set(body, HEADER + key.length);
  return out;
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
