// Agent HTML → HTML the window may show. Agent text is untrusted: besides script, it must
// not make the window fetch anything remote unasked (a remote image tells its host that,
// and when, the reply was read) or navigate the window away from the app.
//
// DOMPurify runs on an explicit allow-list of the tags and attributes markdown produces,
// so an element or attribute nobody thought of (SVG `<image href>`, `<source srcset>`,
// `poster`, `<table background>`, `style`, `<area href>`) is dropped rather than kept.
// The two URL attributes left (`a[href]`, `img[src]`) are judged on the URL as the
// browser's URL parser reads it, not on the raw text (`h&#9;ttps:` is `https:` to it).
// The CSP (src-tauri/tauri.conf.json) is the second wall: it allows no remote image.
import DOMPurify from "dompurify";

const ALLOWED_TAGS = [
  "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em",
  "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre",
  "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot",
  "th", "thead", "tr", "u", "ul", "var",
];

/** No attribute here can name a URL but `href` (on `a`) and `src` (on `img`). */
const ALLOWED_ATTR = ["href", "src", "alt", "title", "class", "align", "start", "colspan", "rowspan", "open", "width", "height"];

/** Where each kept URL attribute may appear; anywhere else it is dropped. */
const URL_ATTR: Record<string, string> = { href: "A", src: "IMG" };

/** Class names agent HTML may keep: the highlighter's own (app styles stay the app's). */
const CLASS = /^(hljs(-[\w-]+)?|language-[\w+#.-]+)$/;

/**
 * A relative URL is resolved against this base only to read it as the URL parser does;
 * its scheme is a special one, so `\\host` and `//host` read as another host (they
 * would in an http(s) page too).
 */
const BASE = new URL("https://weft-relative.invalid/");

/**
 * A URL attribute's value as the URL parser takes it: the HTML parser has already
 * decoded entities (`h&#9;ttps:` holds a real tab); the URL parser then strips leading
 * and trailing C0 controls and spaces and drops every tab and newline inside.
 */
export function normalizeUrl(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "").replace(/[\t\n\r]/g, "");
}

export type UrlKind =
  /** A relative reference (a path, `?query`, `#fragment`): a file of the session's folder. */
  | { kind: "relative"; url: string }
  /** An absolute URL (a protocol-relative one made absolute): `scheme` without the colon. */
  | { kind: "absolute"; url: string; scheme: string }
  | { kind: "invalid" };

/** Reads `value` as the browser would resolve it. */
export function readUrl(value: string): UrlKind {
  const url = normalizeUrl(value);
  let parsed: URL;
  try {
    parsed = new URL(url, BASE);
  } catch {
    return { kind: "invalid" };
  }
  if (parsed.origin === BASE.origin) return { kind: "relative", url };
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  // Written as the agent wrote it when it names its scheme (no `/` added to a bare
  // host), else as the browser would resolve it (`//host/x` is `https://host/x`).
  return { kind: "absolute", url: /^[a-z][a-z0-9+.-]*:/i.test(url) ? url : parsed.href, scheme };
}

const LINK_SCHEMES = new Set(["http", "https", "mailto", "file"]);

/** `a[href]`: the link's normalized form, or null to drop it. */
function linkHref(value: string): string | null {
  const read = readUrl(value);
  if (read.kind === "relative") return read.url;
  if (read.kind === "absolute" && LINK_SCHEMES.has(read.scheme)) return read.url;
  return null;
}

/** `img[src]`: only an inline image stays live; an https one waits for a click. */
function imageSource(value: string): { live: string } | { remote: string } | null {
  const read = readUrl(value);
  if (read.kind !== "absolute") return null;
  if (read.scheme === "data" && /^data:image\//i.test(read.url)) return { live: read.url };
  if (read.scheme === "https") return { remote: read.url };
  return null;
}

/** Images whose https source waits for a click, until their attributes are done. */
const remoteImages = new WeakMap<Element, string>();

function onAttribute(node: Element, data: { attrName: string; attrValue: string; keepAttr: boolean }) {
  const name = data.attrName;
  if (name === "class") {
    const kept = data.attrValue.split(/\s+/).filter((c) => CLASS.test(c));
    if (kept.length === 0) data.keepAttr = false;
    else data.attrValue = kept.join(" ");
    return;
  }
  const on = URL_ATTR[name];
  if (!on) return;
  if (node.nodeName !== on) {
    data.keepAttr = false;
    return;
  }
  if (on === "A") {
    const href = linkHref(data.attrValue);
    if (href === null) data.keepAttr = false;
    else data.attrValue = href;
    return;
  }
  const src = imageSource(data.attrValue);
  if (src && "live" in src) {
    data.attrValue = src.live;
    return;
  }
  data.keepAttr = false;
  if (src) remoteImages.set(node, src.remote);
}

function afterAttributes(node: Element) {
  // Links open outside the window (Transcript.svelte routes the click; the shell
  // refuses any navigation away from the app).
  if (node.nodeName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
  // Set here, after DOMPurify has checked the attribute list (data-* is not on it).
  // A remote image loads only when the user asks (Markdown.svelte adds the button).
  const remote = remoteImages.get(node);
  if (remote !== undefined) {
    node.setAttribute("data-remote-src", remote);
    node.setAttribute("data-testid", "remote-image");
  }
}

let purifier: ReturnType<typeof DOMPurify> | null = null;

function instance() {
  if (!purifier) {
    // An instance of its own, so these hooks apply to agent HTML only.
    purifier = DOMPurify(window);
    purifier.addHook("uponSanitizeAttribute", onAttribute);
    purifier.addHook("afterSanitizeAttributes", afterAttributes);
  }
  return purifier;
}

/**
 * Sanitizes agent HTML: no script, handlers, forms, frames, SVG, MathML, media or
 * styles; links only to http(s), mailto, file or relative paths; no image that loads
 * anything remote (an https one is kept in `data-remote-src` for the click).
 */
export function sanitize(html: string): string {
  return instance().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOW_UNKNOWN_PROTOCOLS: false,
    // What the hook left of an href (DOMPurify's default list has no file:).
    ALLOWED_URI_REGEXP: /^(?:(?:https?|mailto|file):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i,
  });
}
