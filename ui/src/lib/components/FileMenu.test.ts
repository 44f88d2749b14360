import { describe, expect, it } from "vitest";
import { flushSync } from "svelte";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { FakeTransport } from "../fake-transport";
import Harness from "./FileMenuHarness.test.svelte";

function transport() {
  const t = new FakeTransport();
  t.files = [
    { path: "src", kind: "dir" },
    { path: "src/widget.ts", kind: "file" },
    { path: "src/lib/widget_parser.rs", kind: "file" },
    { path: "README.md", kind: "file" },
  ];
  return t;
}

const options = () => [...(screen.queryByTestId("file-menu")?.querySelectorAll("li") ?? [])].map((li) => li.dataset.path);

async function type(box: HTMLTextAreaElement, value: string) {
  await fireEvent.input(box, { target: { value } });
  // The caret is at the end of what was typed; the daemon's answer comes back.
  flushSync();
}

describe("FileMenu", () => {
  it("offers the workspace's files on @ and part of a name, and a pick puts @path in the prompt", async () => {
    const t = transport();
    render(Harness, { transport: t });
    const box = screen.getByTestId("harness-input") as HTMLTextAreaElement;
    await type(box, "look at @wid");
    await waitFor(() => expect(options()).toEqual(["src/widget.ts", "src/lib/widget_parser.rs"]));
    expect(t.calls.filter((c) => c.verb === "listWorkspaceFiles").at(-1)?.args).toEqual(["/work/demo", "wid"]);
    // ArrowDown moves, Tab picks: the word becomes the mention, a space follows.
    await fireEvent.keyDown(box, { key: "ArrowDown" });
    await fireEvent.keyDown(box, { key: "Tab" });
    expect(box.value).toBe("look at @src/lib/widget_parser.rs ");
    await waitFor(() => expect(screen.queryByTestId("file-menu")).toBeNull());
    // Enter sends once the mention is complete.
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(screen.getByTestId("harness-sent").textContent).toBe("look at @src/lib/widget_parser.rs ");
  });

  it("picks with Enter, keeps a folder's menu open inside it, and Escape closes it", async () => {
    const t = transport();
    render(Harness, { transport: t });
    const box = screen.getByTestId("harness-input") as HTMLTextAreaElement;
    await type(box, "@sr");
    await waitFor(() => expect(options()?.[0]).toBe("src"));
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("@src/");
    expect(screen.getByTestId("harness-sent").textContent).toBe("");
    await waitFor(() => expect(options()).toEqual(["src/widget.ts", "src/lib/widget_parser.rs"]));
    await fireEvent.keyDown(box, { key: "Escape" });
    flushSync();
    expect(screen.queryByTestId("file-menu")).toBeNull();
    // Escape let the next Enter through to send.
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(screen.getByTestId("harness-sent").textContent).toBe("@src/");
  });

  it("stays closed for an e-mail address, a bare @, and without a workspace", async () => {
    const t = transport();
    const { unmount } = render(Harness, { transport: t });
    const box = screen.getByTestId("harness-input") as HTMLTextAreaElement;
    await type(box, "mail me@widget");
    await type(box, "just @");
    expect(screen.queryByTestId("file-menu")).toBeNull();
    expect(t.calls.some((c) => c.verb === "listWorkspaceFiles")).toBe(false);
    unmount();
    render(Harness, { transport: t, workspace: null });
    await type(screen.getByTestId("harness-input") as HTMLTextAreaElement, "@wid");
    expect(screen.queryByTestId("file-menu")).toBeNull();
    expect(t.calls.some((c) => c.verb === "listWorkspaceFiles")).toBe(false);
  });
});
