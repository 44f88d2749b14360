// The window shows nothing remote unasked (issue 32 §5, security-3.md M8), in the real
// WebView: the echo agent replies with every way agent HTML could load a remote image
// (SVG <image href>/xlink:href, <source srcset>, poster, a style url(), <table
// background>, a tab inside "https", a protocol-relative and an http address) or link
// the window away (SVG <a xlink:href>, <area href>), all pointing at an https server on
// loopback that counts every connection. Nothing may reach it; links a sanitizer could
// miss, clicked anyway, leave the window on the app (the shell's navigation guard);
// then the one image the user clicks loads, through the shell, from the same server.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { byTestId, chooseAgent, launch, lastTurnText, loopbackServer, phase, screenshot, send, until } from "./harness.mjs";

const ready = Boolean(process.env.WEFT_E2E_TLS_CERT);

/** How many navigations the shell has refused so far (its log, in the run's WEFT_HOME). */
function refusals() {
  const logs = join(process.env.WEFT_HOME_DIR ?? "/nonexistent", "logs");
  if (!existsSync(logs)) return 0;
  return readdirSync(logs)
    .filter((f) => /^weft\..*\.log$/.test(f))
    .map((f) => readFileSync(join(logs, f), "utf8").split("refused a navigation away from the app").length - 1)
    .reduce((a, b) => a + b, 0);
}

function vectors(o) {
  return [
    "VECTORS-START",
    `<img alt="tab" src="h&#9;ttps://${o}/tab.png">`,
    `<svg width="40" height="20"><image href="https://${o}/svg-image.png" width="20" height="20"/><image xlink:href="https://${o}/svg-xlink.png" width="20" height="20"/><a xlink:href="https://${o}/svg-nav"><text y="15">svg link</text></a></svg>`,
    `<picture><source srcset="https://${o}/source.png"><img alt="picture"></picture>`,
    `<video poster="https://${o}/poster.png"></video>`,
    `<span style="background:url(https://${o}/style.png)">styled</span>`,
    `<table background="https://${o}/table.png"><tr><td>cell</td></tr></table>`,
    `<map name="m"><area href="https://${o}/area" shape="rect" coords="0,0,50,50"></map><img usemap="#m" alt="map">`,
    `<img alt="proto" src="//${o}/proto.png"> <img alt="http" src="http://${o}/http.png">`,
    `![sentinel](https://${o}/sentinel.png)`,
    "VECTORS-END",
  ].join(" ");
}

describe("Weft desktop app: nothing remote unasked", { skip: ready ? false : "no run certificate (scripts/e2e-app.sh makes one)" }, () => {
  let browser;
  let server;
  before(async () => {
    server = await loopbackServer();
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
    if (server) await server.close();
  });

  it("loads no image and follows no link of agent HTML; the image clicked loads through the shell", async () => {
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "echo");
    await send(browser, vectors(server.origin));
    await until(browser, async () => (await lastTurnText(browser)).includes("VECTORS-END"), "the reply with every vector");
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish");

    const drawn = await browser.execute(() => {
      const reply = [...document.querySelectorAll('[data-testid="turn-text"]')].at(-1);
      // What the reply's HTML made (not the app's own buttons and icons added to it).
      const tags = [...reply.querySelectorAll("*")].filter((e) => !e.closest("button")).map((e) => e.localName);
      const live = [...reply.querySelectorAll("*")].filter((e) => !e.closest("button")).flatMap((e) =>
        [...e.attributes].filter((a) => a.value.includes("127.0.0.1") && a.name !== "data-remote-src").map((a) => `${e.localName}[${a.name}]`),
      );
      const waiting = [...reply.querySelectorAll('img[data-testid="remote-image"]')].map((i) => i.dataset.remoteSrc);
      return { tags, live, waiting };
    });
    for (const tag of ["svg", "image", "picture", "source", "video", "map", "area", "style"]) {
      assert.ok(!drawn.tags.includes(tag), `<${tag}> is not drawn: ${drawn.tags.join(" ")}`);
    }
    assert.deepEqual(drawn.live, [], "no attribute left names the server");
    const o = server.origin;
    assert.deepEqual(drawn.waiting, [`https://${o}/tab.png`, `https://${o}/proto.png`, `https://${o}/sentinel.png`], "the https images wait for a click");

    // The one image the user asks for: fetched by the shell, shown as data. Nothing
    // else reached the server: every load of the reply's was asked for before it.
    const sentinel = await browser.$(`[data-testid="remote-image"][data-remote-src="https://${o}/sentinel.png"]`);
    const load = await sentinel.nextElement();
    assert.equal(await load.getAttribute("data-testid"), "load-image");
    await screenshot(browser, "remote-vectors-light");
    await load.click();
    await until(browser, async () => /^data:image\/png;base64,/.test((await sentinel.getAttribute("src")) ?? ""), "the clicked image to load through the shell");
    assert.deepEqual(server.seen.requests, ["/sentinel.png"]);
    assert.equal(server.seen.connections, 1, `connections that reached the server: ${server.seen.connections}`);

    // Links a sanitizer could miss, outside the transcript (no click handler of the
    // page routes them): an SVG link, an image map's area, and the page's location.
    // The shell refuses each navigation (its log says so), and the window stays.
    const refusalsBefore = refusals();
    await browser.execute((origin) => {
      const box = document.createElement("div");
      box.innerHTML =
        `<svg width="80" height="20"><a xlink:href="https://${origin}/planted-svg"><text y="15">svg</text></a></svg>` +
        `<map name="pm"><area id="planted-area" href="https://${origin}/planted-area" shape="rect" coords="0,0,80,20"></map>`;
      document.body.append(box);
      box.querySelector("a").dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
      document.getElementById("planted-area").click();
      window.location.href = `https://${origin}/planted-location`;
    }, o);
    await until(browser, async () => refusals() - refusalsBefore >= 3, "the shell to refuse the three navigations");
    assert.match(await browser.getUrl(), /^tauri:\/\/localhost/, "the window stayed on the app");
    assert.ok(await (await byTestId(browser, "app")).isExisting());
    // WebKit may open a connection to a clicked link's host while the shell decides;
    // no request is ever sent on it.
    assert.deepEqual(server.seen.requests, ["/sentinel.png"]);
  });
});
