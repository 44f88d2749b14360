import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { AppStore } from "./lib/app.svelte";
import { inTauri, tauriTransport } from "./lib/tauri-transport";

// Inside the desktop app the transport is Tauri IPC; in a plain browser (`npm run
// dev`) an in-memory fake, so the UI can be worked on without the shell. The fake is
// loaded only there.
const transport = inTauri()
  ? tauriTransport()
  : await import("./lib/fake-transport").then((m) => new m.FakeTransport());
const app = new AppStore(transport);
const target = document.getElementById("app");
if (target) mount(App, { target, props: { app } });
