// xterm.js writes its dimension and theme rules into <style> elements, which the app's
// CSP (`style-src 'self'`, no 'unsafe-inline') blocks. This mirrors every <style>
// inside `root` into a constructable stylesheet adopted by the document (CSSOM, which
// the CSP allows), and keeps it in step as xterm rewrites them.
export function mirrorInlineStyles(root: HTMLElement): () => void {
  if (typeof CSSStyleSheet === "undefined" || !("adoptedStyleSheets" in document)) return () => {};
  const sheets = new Map<HTMLStyleElement, CSSStyleSheet>();
  const sync = () => {
    const seen = new Set<HTMLStyleElement>();
    for (const el of root.querySelectorAll("style")) {
      seen.add(el);
      let sheet = sheets.get(el);
      if (!sheet) {
        sheet = new CSSStyleSheet();
        sheets.set(el, sheet);
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
      }
      try {
        sheet.replaceSync(el.textContent ?? "");
      } catch {
        // A rule the engine rejects: keep the last good text.
      }
    }
    for (const [el, sheet] of sheets) {
      if (seen.has(el)) continue;
      sheets.delete(el);
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
    }
  };
  const observer = new MutationObserver(sync);
  observer.observe(root, { subtree: true, childList: true, characterData: true });
  sync();
  return () => {
    observer.disconnect();
    const mine = new Set(sheets.values());
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => !mine.has(s));
    sheets.clear();
  };
}
