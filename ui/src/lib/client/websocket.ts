// The browser's link: a WebSocket to the daemon (`ws(s)://HOST/ws`). Text frames are
// JSON wire messages, binary frames terminal output. The first frame is the hello with
// the token (never in the URL, which lands in logs). When the socket drops after it was
// up, the link says so and dials again with a growing pause until a hello is answered.
import type { ServerMessage, Welcome } from "../../generated";
import { VerbError } from "../transport";
import type { Link, LinkEvents } from "./link";

/** The hello's id; the client's own requests start at 1. */
const HELLO_ID = 0;
/** WebSocket.OPEN. */
const OPEN = 1;

export interface WebSocketLinkOptions {
  url: string;
  token: string | null;
  /** This UI's version (the daemon's, as it serves these files). */
  version: string;
  surface?: string;
  /** First and longest pause between reconnection attempts. */
  retryMs?: { first: number; max: number };
  /** For tests. */
  WebSocket?: typeof WebSocket;
}

/** The daemon's WebSocket on the host that served this page. */
export function pageSocketUrl(location: Pick<Location, "protocol" | "host">): string {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

export function webSocketLink(options: WebSocketLinkOptions): Link {
  const Socket = options.WebSocket ?? WebSocket;
  const first = options.retryMs?.first ?? 250;
  const max = options.retryMs?.max ?? 5000;
  let events: LinkEvents;
  let socket: WebSocket | null = null;
  let pause = first;

  /** Opens a socket and says hello; resolves once the daemon answers it. */
  function dial(): Promise<Welcome> {
    return new Promise((resolve, reject) => {
      const ws = new Socket(options.url);
      ws.binaryType = "arraybuffer";
      let welcomed = false;
      ws.onopen = () => {
        ws.send(
          JSON.stringify({
            id: HELLO_ID,
            type: "hello",
            version: options.version,
            surface: options.surface ?? "browser",
            env: null,
            token: options.token,
          }),
        );
      };
      ws.onmessage = (e: MessageEvent) => {
        if (typeof e.data !== "string") {
          if (welcomed) events.frame(new Uint8Array(e.data as ArrayBuffer));
          return;
        }
        let message: ServerMessage;
        try {
          message = JSON.parse(e.data) as ServerMessage;
        } catch {
          return;
        }
        if (welcomed) {
          events.message(message);
        } else if (message.type === "reply" && message.id === HELLO_ID) {
          welcomed = true;
          socket = ws;
          resolve(message.result as Welcome);
        } else if (message.type === "error" && message.id === HELLO_ID) {
          reject(new VerbError(message.error));
          ws.close();
        }
      };
      ws.onclose = (e: CloseEvent) => {
        const why = e.reason || `closed (${e.code})`;
        if (!welcomed) {
          reject(new VerbError({ code: "internal", message: `Could not connect to ${options.url}: ${why}` }));
          return;
        }
        if (socket === ws) socket = null;
        events.down(why, true);
        retry();
      };
    });
  }

  function retry() {
    setTimeout(() => {
      dial().then(
        (welcome) => {
          pause = first;
          events.up(welcome);
        },
        () => {
          pause = Math.min(pause * 2, max);
          retry();
        },
      );
    }, pause);
  }

  return {
    connect(listener) {
      events = listener;
      if (!options.token) {
        // The daemon refuses a WebSocket without one; say where it comes from.
        const message = "No token: open the address `weft serve` printed, with its #token=… part.";
        return Promise.reject(new VerbError({ code: "badRequest", message }));
      }
      return dial();
    },
    send(message) {
      if (!socket || socket.readyState !== OPEN) {
        throw new VerbError({ code: "internal", message: "Not connected to Weft (reconnecting)." }, true);
      }
      socket.send(JSON.stringify(message));
    },
  };
}
