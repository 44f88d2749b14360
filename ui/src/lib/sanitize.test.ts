import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";
import { normalizeUrl, readUrl } from "./sanitize";

// Every way agent HTML could make the window fetch a remote URL unasked, or navigate
// away from the app (security-3.md M8). `evil.example` marks the URLs that must not
// survive anywhere but an image's click-to-load address.
const VECTORS: Record<string, string> = {
  tabInScheme: '<img src="h&#9;ttps://evil.example/tab.png">',
  newlineInScheme: '<img src="ht&#10;tps://evil.example/newline.png">',
  leadingControl: '<img src="&#1;&#32;https://evil.example/lead.png">',
  protocolRelative: '<img src="//evil.example/proto-rel.png">',
  backslashes: '<img src="\\\\evil.example\\bs.png">',
  imgSrcset: '<img srcset="https://evil.example/srcset.png 2x" alt="s">',
  svgImageHref: '<svg><image href="https://evil.example/svg-image.png" width="10" height="10"/></svg>',
  svgImageXlink: '<svg xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="https://evil.example/svg-xlink.png"/></svg>',
  svgFeImage: '<svg><filter id="f"><feImage href="https://evil.example/feimage.png"/></filter></svg>',
  svgUse: '<svg><use href="https://evil.example/use.svg#x"/></svg>',
  pictureSource: '<picture><source srcset="https://evil.example/source.png"><img alt="p"></picture>',
  videoPoster: '<video poster="https://evil.example/poster.png" src="https://evil.example/video.mp4"></video>',
  audioTrack: '<audio src="https://evil.example/a.mp3"><track src="https://evil.example/t.vtt"></audio>',
  styleAttr: '<div style="background:url(https://evil.example/style.png)">s</div>',
  styleTag: "<style>p{background:url(https://evil.example/style-tag.png)}</style>",
  tableBackground: '<table background="https://evil.example/table.png"><tr><td background="https://evil.example/td.png">t</td></tr></table>',
  bodyBackground: '<body background="https://evil.example/body.png">b</body>',
  inputImage: '<input type="image" src="https://evil.example/input.png">',
  linkTag: '<link rel="stylesheet" href="https://evil.example/x.css">',
  metaRefresh: '<meta http-equiv="refresh" content="0;url=https://evil.example/meta">',
  frames: '<iframe src="https://evil.example/f"></iframe><object data="https://evil.example/o"></object><embed src="https://evil.example/e">',
  svgLink: '<svg xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="https://evil.example/svg-nav"><text y="10">go</text></a></svg>',
  svgLinkHref: '<svg><a href="https://evil.example/svg-nav2"><text y="10">go</text></a></svg>',
  areaLink: '<map name="m"><area href="https://evil.example/area" shape="rect" coords="0,0,10,10"></map><img usemap="#m" alt="m">',
  mathLink: '<math href="https://evil.example/math"><mi>x</mi></math>',
  anchorPing: '<a href="https://ok.example/" ping="https://evil.example/ping">p</a>',
  citeAttr: '<blockquote cite="https://evil.example/cite">q</blockquote>',
  formAction: '<form action="https://evil.example/form"><button formaction="https://evil.example/btn">b</button></form>',
  baseTag: '<base href="https://evil.example/">',
  dataAttr: '<img data-remote-src="https://evil.example/planted.png" alt="d">',
};

/** Every attribute still naming an evil.example URL, but an https image's click-to-load address. */
function leftovers(html: string): string[] {
  const div = document.createElement("div");
  div.innerHTML = html;
  const out: string[] = [];
  for (const el of div.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      if (!attr.value.includes("evil.example")) continue;
      if (el.nodeName === "IMG" && attr.name === "data-remote-src" && attr.value.startsWith("https://evil.example/")) continue;
      out.push(`<${el.nodeName.toLowerCase()} ${attr.name}="${attr.value}">`);
    }
  }
  if (/evil\.example/.test(div.querySelector("style")?.textContent ?? "")) out.push("<style>");
  return out;
}

describe("agent HTML cannot load anything remote or navigate the window", () => {
  for (const [name, html] of Object.entries(VECTORS)) {
    it(name, () => {
      const out = renderMarkdown(`before\n\n${html}\n\nafter`);
      expect(leftovers(out)).toEqual([]);
      const div = document.createElement("div");
      div.innerHTML = out;
      // No element outside markdown's own: no svg, math, media, maps, frames, forms.
      const tags = new Set([...div.querySelectorAll("*")].map((e) => e.nodeName.toLowerCase()));
      for (const t of ["svg", "image", "a:not([href])", "area", "map", "math", "picture", "source", "video", "audio", "track", "style", "link", "meta", "iframe", "object", "embed", "form", "base", "input"])
        expect(tags.has(t), `<${t}> in ${out}`).toBe(false);
      // Every image left is either inline or waits for a click.
      for (const img of div.querySelectorAll("img")) {
        const src = img.getAttribute("src");
        if (src !== null) expect(src).toMatch(/^data:image\//);
        expect(img.getAttribute("srcset")).toBeNull();
      }
    });
  }

  it("an https image hidden behind a stripped character waits for the click under its real address", () => {
    const div = document.createElement("div");
    div.innerHTML = renderMarkdown(VECTORS.tabInScheme + VECTORS.protocolRelative + VECTORS.backslashes);
    expect([...div.querySelectorAll("img")].map((i) => i.dataset.remoteSrc)).toEqual([
      "https://evil.example/tab.png",
      "https://evil.example/proto-rel.png",
      "https://evil.example/bs.png",
    ]);
    for (const img of div.querySelectorAll("img")) expect(img.dataset.testid).toBe("remote-image");
  });

  it("keeps what markdown makes: links, code highlighting, tables, inline images", () => {
    const out = renderMarkdown(
      "[site](https://ok.example/a?b=1) [file](src/main.rs) [mail](mailto:a@b.example) [top](#x)\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n```rust\nfn x() {}\n```\n\n![i](data:image/png;base64,AAAA)",
    );
    const div = document.createElement("div");
    div.innerHTML = out;
    expect([...div.querySelectorAll("a")].map((a) => a.getAttribute("href"))).toEqual([
      "https://ok.example/a?b=1",
      "src/main.rs",
      "mailto:a@b.example",
      "#x",
    ]);
    for (const a of div.querySelectorAll("a")) expect(a.rel).toBe("noopener noreferrer");
    expect(div.querySelector("th")?.getAttribute("align")).toBe("left");
    expect(div.querySelector("code")?.className).toBe("hljs language-rust");
    expect(div.querySelector(".hljs-keyword")).not.toBeNull();
    expect(div.querySelector("img")?.getAttribute("src")).toBe("data:image/png;base64,AAAA");
  });

  it("drops links to other schemes, however spelled, and the app's own classes", () => {
    const div = document.createElement("div");
    div.innerHTML = renderMarkdown(
      '<a href="java&#9;script:alert(1)">j</a><a href=" &#1;javascript:alert(2)">k</a><a href="vbscript:x">v</a><a href="tauri://localhost/x">t</a><a class="backdrop hljs-x" href="#y">c</a>',
    );
    expect([...div.querySelectorAll("a")].map((a) => a.getAttribute("href"))).toEqual([null, null, null, null, "#y"]);
    expect(div.querySelector("a.hljs-x")?.className).toBe("hljs-x");
  });
});

describe("URLs are read as the browser's URL parser reads them", () => {
  it("strips what the parser strips", () => {
    expect(normalizeUrl(" \u0001h\tt\ntp\rs://a.example/x \u0000")).toBe("https://a.example/x");
  });
  it("tells relative references from absolute URLs", () => {
    expect(readUrl("src/a.rs")).toEqual({ kind: "relative", url: "src/a.rs" });
    expect(readUrl("#x")).toEqual({ kind: "relative", url: "#x" });
    expect(readUrl("//h.example/p")).toEqual({ kind: "absolute", url: "https://h.example/p", scheme: "https" });
    expect(readUrl("h\tttps://h.example/")).toEqual({ kind: "absolute", url: "https://h.example/", scheme: "https" });
    expect(readUrl("MAILTO:x@y.example")).toMatchObject({ kind: "absolute", scheme: "mailto" });
    expect(readUrl("https://[bad")).toEqual({ kind: "invalid" });
  });
});
