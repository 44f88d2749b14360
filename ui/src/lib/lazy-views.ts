// Places the first screen does not draw load on first use, and in the background once
// the window is ready (`preloadViews`), so a launch parses only what it shows and a
// first visit still finds its code here. The usage page (Chart.js) and the terminal
// pane (xterm.js) are left out of the preload: they are large and many never open them.

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    loading ??= load().catch((e: unknown) => {
      // A failed load (a chunk missing after an upgrade) is tried again next time.
      loading = null;
      throw e;
    });
    return loading;
  };
}

export const lazyViews = {
  inbox: once(() => import("./components/InboxView.svelte")),
  library: once(() => import("./components/LibraryView.svelte")),
  review: once(() => import("./components/ReviewView.svelte")),
  settings: once(() => import("./components/SettingsView.svelte")),
  palette: once(() => import("./components/Palette.svelte")),
  help: once(() => import("./components/HelpSheet.svelte")),
  usage: once(() => import("./components/UsagePage.svelte")),
  /** xterm.js (≈300 kB): the session's, an account login's and an install's pane. */
  terminal: once(() => import("./components/TerminalPane.svelte")),
};

const PRELOADED: (keyof typeof lazyViews)[] = ["inbox", "library", "review", "settings", "palette", "help"];

/**
 * Fetches the places' code after the launch, so the first visit does not wait for it;
 * and the markdown renderer, which nearly every reply needs.
 */
export function preloadViews(): void {
  setTimeout(() => {
    for (const name of PRELOADED) void lazyViews[name]().catch(() => {});
    void import("./components/Markdown.svelte").then((m) => m.loadRenderer()).catch(() => {});
  }, 0);
}
