import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";
import { transcriptItems } from "./transcript-items";
import { emptySnapshot } from "./patch";

describe("renderMarkdown", () => {
  it("never lets agent output run script", () => {
    const html = renderMarkdown(
      'hi <script>alert(1)</script><img src=x onerror="alert(2)"> [x](javascript:alert(3)) <iframe src="https://e.invalid"></iframe><a href="https://ok.invalid" onclick="x()">ok</a>',
    );
    expect(html).not.toMatch(/<script|onerror|javascript:|<iframe|onclick/i);
    expect(html).toContain('href="https://ok.invalid"');
    expect(html).toContain('rel="noopener noreferrer"');
  });

  it("highlights fenced code and survives a half-streamed fence", () => {
    const html = renderMarkdown("```rust\nfn main() { let x = 1; }\n```");
    expect(html).toContain('class="hljs language-rust"');
    expect(html).toContain("hljs-keyword");
    expect(renderMarkdown("```py\nprint(")).toContain("<pre>");
  });
});

describe("transcriptItems", () => {
  it("nests a subagent's calls under its task call", () => {
    const s = emptySnapshot("claude");
    s.taskId = "t";
    const call = (id: string, parentId: string | null, kind = "read" as const) => ({
      id, name: "Read", summary: id, input: null, result: null, status: "done" as const, kind, parentId,
    });
    s.toolCalls = [call("task1", null), call("r1", "task1"), call("r0", null), call("r2", "task1")];
    s.subAgents = [{ id: "task1", name: "explorer", summary: "look", status: "done", result: null }];
    const rows = transcriptItems([s], 0).filter((i) => i.kind === "tool" || i.kind === "subagent");
    expect(rows.map((r) => `${r.kind}:${"depth" in r ? r.depth : ""}:${r.key.split(":").at(-1)}`)).toEqual([
      "tool:0:task1",
      "subagent:1:task1",
      "tool:2:r1",
      "tool:2:r2",
      "tool:0:r0",
    ]);
  });
  it("10,000 calls flatten fast", () => {
    const s = emptySnapshot("echo");
    s.toolCalls = Array.from({ length: 10_000 }, (_, i) => ({
      id: `c${i}`, name: "Read", summary: "", input: null, result: null, status: "done" as const, kind: "read" as const, parentId: null,
    }));
    const t0 = performance.now();
    const items = transcriptItems([s], 0);
    expect(items.length).toBeGreaterThan(10_000);
    expect(performance.now() - t0).toBeLessThan(500);
  });
});

describe("transcriptItems caching", () => {
  it("reuses a finished turn's rows and rebuilds only the live turn's", () => {
    const done = emptySnapshot("echo");
    done.taskId = "a";
    done.toolCalls = [{ id: "x", name: "Read", summary: "", input: null, result: null, status: "done", kind: "read", parentId: null }];
    const live = emptySnapshot("echo");
    live.taskId = "b";
    const first = transcriptItems([done, live], 0, live);
    live.toolCalls = [{ ...done.toolCalls[0], id: "y" }];
    const second = transcriptItems([done, live], 0, live);
    const rowOf = (items: ReturnType<typeof transcriptItems>, key: string) => items.find((i) => i.key === key);
    expect(rowOf(second, "a:c:x")).toBe(rowOf(first, "a:c:x"));
    expect(rowOf(second, "b:c:y")).toBeTruthy();
    expect(rowOf(first, "b:c:y")).toBeUndefined();
  });
});

describe("remote images", () => {
  it("are not loaded: their address waits in data-remote-src; data: images and http ones are handled", async () => {
    const { renderMarkdown } = await import("./markdown");
    const html = renderMarkdown("![chart](https://example.com/c.png) ![x](http://example.com/x.png) ![d](data:image/png;base64,AAAA)");
    const div = document.createElement("div");
    div.innerHTML = html;
    const [remote, insecure, inline] = [...div.querySelectorAll("img")];
    expect(remote.getAttribute("src")).toBeNull();
    expect(remote.dataset.remoteSrc).toBe("https://example.com/c.png");
    expect(insecure.getAttribute("src")).toBeNull();
    expect(insecure.dataset.remoteSrc).toBeUndefined();
    expect(inline.getAttribute("src")).toMatch(/^data:image\/png/);
  });
});
