// How a remote image in agent output loads when the user clicks "Load image": the
// surface's fetcher (the desktop shell, since the window's CSP loads no remote image
// itself) set once by App.svelte as a Svelte context; Markdown.svelte reads it.
import { getContext, setContext } from "svelte";

export type ImageFetcher = (url: string) => Promise<string>;

const KEY = Symbol("weft:image-fetcher");

export function provideImageFetcher(fetcher: ImageFetcher | undefined) {
  setContext(KEY, fetcher ?? null);
}

/** The same context as a map, for a component rendered on its own (tests). */
export function imageFetcherContext(fetcher: ImageFetcher): Map<symbol, ImageFetcher> {
  return new Map([[KEY, fetcher]]);
}

/** The fetcher, or null where the page loads images itself (a browser). */
export function imageFetcher(): ImageFetcher | null {
  return getContext<ImageFetcher | null | undefined>(KEY) ?? null;
}
