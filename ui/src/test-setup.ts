// jsdom lacks these; the components use them.
class NoopResizeObserver {
  observe() {}
  unobserve() {}
  disconnect() {}
}
globalThis.ResizeObserver ??= NoopResizeObserver as unknown as typeof ResizeObserver;
if (!window.matchMedia) {
  window.matchMedia = ((query: string) => ({
    matches: false,
    media: query,
    onchange: null,
    addEventListener() {},
    removeEventListener() {},
    addListener() {},
    removeListener() {},
    dispatchEvent: () => false,
  })) as unknown as typeof window.matchMedia;
}
Element.prototype.scrollTo ??= function () {};

// waitFor's default 1 s is shorter than a lazily imported pane (xterm) takes to load
// while the machine also builds: App.test.ts's terminal test failed that way at a load
// average of 20. A longer bound costs nothing when the condition holds sooner.
import { configure } from "@testing-library/svelte";
configure({ asyncUtilTimeout: 10000 });
Element.prototype.scrollIntoView ??= function () {};
