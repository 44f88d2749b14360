import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import "./phone.css";
import { AppStore } from "./lib/app.svelte";
import { browserShell, takeFragment } from "./lib/client/browser";
import { WeftClient } from "./lib/client/client";
import { inTauri, tauriLink, tauriShell } from "./lib/client/tauri";
import { pageSocketUrl, webSocketLink } from "./lib/client/websocket";

// The launch's phases, for scripts/bench-app.sh (`launchPhases`): every static import
// fetched, parsed and run; the page mounted; (app.svelte.ts) the daemon reached; ready.
performance.mark("weft:script");

// Inside the desktop app the link is the Tauri shell's; in a browser, the WebSocket of
// the daemon that served the page (its token in the address's fragment). `npm run dev`
// opened with no token runs on an in-memory fake, so the UI can be worked on without a
// daemon; the fake is loaded only then.
async function makeApp(): Promise<AppStore> {
  if (inTauri()) {
    const client = new WeftClient(tauriLink(), tauriShell());
    return new AppStore(client, client);
  }
  const start = takeFragment(window.location, window.history, window.sessionStorage, window.localStorage);
  if (import.meta.env.DEV && !start.token) {
    const { FakeTransport } = await import("./lib/fake-transport");
    return new AppStore(new FakeTransport());
  }
  const link = webSocketLink({ url: pageSocketUrl(window.location), token: start.token, version: __WEFT_VERSION__ });
  const client = new WeftClient(link, browserShell(start, window.localStorage));
  return new AppStore(client, client);
}

const app = await makeApp();
const target = document.getElementById("app");
if (target) mount(App, { target, props: { app } });
performance.mark("weft:mounted");
