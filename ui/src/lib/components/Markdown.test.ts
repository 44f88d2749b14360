import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import Markdown from "./Markdown.svelte";
import { imageFetcherContext } from "../remote-images";

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

  it("loads a remote image through the shell when asked: the page never fetches it", async () => {
    const asked: string[] = [];
    let fail = true;
    const fetcher = async (url: string) => {
      asked.push(url);
      if (fail) throw new Error("the server answered 404");
      return "data:image/png;base64,iVBORw==";
    };
    render(Markdown, { props: { text: '<img alt="chart" src="h&#9;ttps://img.example.com/c.png">' }, context: imageFetcherContext(fetcher) });
    const load = await screen.findByTestId("load-image");
    const img = screen.getByTestId("remote-image") as HTMLImageElement;
    expect(img.getAttribute("src")).toBeNull();
    expect(asked).toEqual([]);
    await fireEvent.click(load);
    await waitFor(() => expect(load.dataset.failed).toBe("true"));
    expect(load.title).toMatch(/404/);
    expect(img.getAttribute("src")).toBeNull();
    fail = false;
    await fireEvent.click(load);
    await waitFor(() => expect(img.getAttribute("src")).toBe("data:image/png;base64,iVBORw=="));
    expect(asked).toEqual(["https://img.example.com/c.png", "https://img.example.com/c.png"]);
    expect(screen.queryByTestId("load-image")).toBeNull();
  });

  it("loads a remote image only when asked (a page without a shell sets it itself)", async () => {
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
