import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import Markdown from "./Markdown.svelte";

describe("Markdown", () => {
  it("puts a copy button on code blocks that copies the code", async () => {
    const written: string[] = [];
    Object.defineProperty(navigator, "clipboard", { value: { writeText: async (s: string) => void written.push(s) }, configurable: true });
    render(Markdown, { text: "Run:\n\n```sh\ncargo test -p weft\n```\n" });
    const copy = await screen.findByTestId("copy-code");
    await fireEvent.click(copy);
    await waitFor(() => expect(written).toEqual(["cargo test -p weft"]));
    await waitFor(() => expect(copy.dataset.copied).toBe("true"));
  });

  it("loads a remote image only when asked", async () => {
    render(Markdown, { text: "![chart](https://img.example.com/c.png)" });
    const load = await screen.findByTestId("load-image");
    const img = screen.getByTestId("remote-image") as HTMLImageElement;
    expect(img.getAttribute("src")).toBeNull();
    expect(load.textContent).toBe("Load image “chart” from img.example.com");
    await fireEvent.click(load);
    expect(img.getAttribute("src")).toBe("https://img.example.com/c.png");
    expect(screen.queryByTestId("load-image")).toBeNull();
  });
});
