import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { AppStore } from "./lib/app.svelte";
import { FakeTransport } from "./lib/fake-transport";
import { inTauri, tauriTransport } from "./lib/tauri-transport";

// Inside the desktop app the transport is Tauri IPC; in a plain browser (`npm run
// dev`) an in-memory fake, so the UI can be worked on without the shell.
const transport = inTauri() ? tauriTransport() : new FakeTransport();
const app = new AppStore(transport);
const target = document.getElementById("app");
if (target) mount(App, { target, props: { app } });
