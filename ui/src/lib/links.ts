// What a click on a link in agent output does. Only http, https and mailto leave for the
// system browser; file:// URLs and relative paths (`[main.rs](src/main.rs)`) are files
// of the session's folder, opened by the shell in the user's editor; anything else
// (tel:, custom schemes) is not followed. In-page anchors stay in the page.

export type LinkTarget = { kind: "url"; url: string } | { kind: "file"; path: string } | { kind: "refused"; href: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

export function classifyHref(href: string | null | undefined): LinkTarget | null {
  const h = (href ?? "").trim();
  if (!h || h.startsWith("#")) return null;
  const scheme = SCHEME.exec(h)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https" || scheme === "mailto") return { kind: "url", url: h };
  if (scheme === "file") {
    try {
      return { kind: "file", path: decodeURIComponent(new URL(h).pathname) };
    } catch {
      return { kind: "refused", href: h };
    }
  }
  if (scheme) return { kind: "refused", href: h };
  // A path: drop a `:line` suffix editors do not take as part of the name.
  return { kind: "file", path: decodeURIComponent(h.split("#")[0].split("?")[0]) };
}

/** The file a tool call works on, from its input (Claude's file_path, others' path). */
export function toolFilePath(input: unknown): string | null {
  if (!input || typeof input !== "object") return null;
  const o = input as Record<string, unknown>;
  for (const k of ["file_path", "path", "notebook_path", "filename"]) {
    const v = o[k];
    if (typeof v === "string" && v.trim() && !v.includes("\n")) return v;
  }
  return null;
}

/**
 * A Svelte action: a click on any link element inside `node` (SVG's and image maps'
 * too; the sanitizer keeps none of those, and the shell refuses the navigation anyway)
 * never navigates the window; its href goes to `open` instead. In-page anchors stay.
 */
export function interceptLinks(node: HTMLElement, open: (href: string) => void) {
  const onClick = (e: MouseEvent) => {
    const a = e.target instanceof Element ? e.target.closest("a, area") : null;
    if (!a || !node.contains(a)) return;
    const href = a.getAttribute("href") ?? a.getAttributeNS("http://www.w3.org/1999/xlink", "href") ?? "";
    if (href.startsWith("#")) return;
    e.preventDefault();
    if (href) open(href);
  };
  node.addEventListener("click", onClick);
  return { destroy: () => node.removeEventListener("click", onClick) };
}
