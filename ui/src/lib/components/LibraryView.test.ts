import { afterEach, describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { LibraryStore } from "../library.svelte";
import type { Transport } from "../transport";
import { fake } from "../test-support/library";
import LibraryView from "./LibraryView.svelte";

describe("LibraryView", () => {
  it("lists native beside managed sessions, searches, opens a transcript and continues it", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    let continued: string | null = null;
    render(LibraryView, { library, oncontinued: (k: string) => (continued = k) });
    await waitFor(() => expect(screen.getAllByTestId("library-row").length).toBe(2));
    const origins = screen.getAllByTestId("library-row").map((r) => r.getAttribute("data-origin"));
    expect(origins).toEqual(["native", "managed"]);

    await fireEvent.input(screen.getByTestId("library-search"), { target: { value: "parse_config" } });
    await waitFor(() => expect(screen.getAllByTestId("library-hit")).toHaveLength(1));
    expect(screen.getByTestId("library-hits").textContent).toContain("«parse_config»");
    await fireEvent.click(screen.getByTestId("library-hit"));
    await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
    expect(screen.getByTestId("library-transcript").textContent).toContain("second ask");

    await fireEvent.input(screen.getByTestId("library-continue-input"), { target: { value: "and now?" } });
    await fireEvent.click(screen.getByTestId("library-continue"));
    await waitFor(() => expect(continued).toBe("claude:n1"));
    expect(sent.find((r) => r.type === "prompt")).toMatchObject({ sessionKey: "claude:n1", prompt: "and now?" });
  });

  it("opens a transcript's links outside the window", async () => {
    const { transport } = fake();
    const library = new LibraryStore(transport);
    const opened: [string, string | null][] = [];
    render(LibraryView, { library, oncontinued: () => {}, initial: "claude:n1", onlink: (h: string, w: string | null) => opened.push([h, w]) });
    const link = await screen.findByRole("link", { name: "the docs" });
    const click = new MouseEvent("click", { bubbles: true, cancelable: true });
    link.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(opened.map(([h]) => h)).toEqual(["https://docs.example/x"]);
  });

  it("forks at a turn, opens the fork with the turns it keeps, and continues the fork", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    let continued: string | null = null;
    render(LibraryView, { library, oncontinued: (k: string) => (continued = k), initial: "claude:n1" });
    await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
    await fireEvent.click(screen.getAllByTestId("library-fork-at")[0]);
    await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(1));
    expect(sent.find((r) => r.type === "forkSession")).toMatchObject({ sessionKey: "claude:n1", at: 1 });
    expect(screen.getByTestId("library-transcript").textContent).not.toContain("second ask");
    await waitFor(() => expect(screen.getAllByTestId("library-row").map((r) => r.getAttribute("data-session"))).toContain("claude:f1"));

    await fireEvent.input(screen.getByTestId("library-continue-input"), { target: { value: "go on from here" } });
    await fireEvent.click(screen.getByTestId("library-continue"));
    await waitFor(() => expect(continued).toBe("claude:f1"));
    expect(sent.filter((r) => r.type === "prompt")).toMatchObject([{ sessionKey: "claude:f1", prompt: "go on from here" }]);
  });

  it("opens on the session it is given (a native row clicked in the sidebar)", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    render(LibraryView, { library, oncontinued: () => {}, initial: "claude:n1" });
    await waitFor(() => expect(screen.getAllByTestId("library-turn").length).toBe(2));
    expect(sent.some((r) => r.type === "openTranscript" && r.sessionKey === "claude:n1")).toBe(true);
  });

  describe("Export", () => {
    afterEach(() => vi.restoreAllMocks());

    it("downloads the daemon's document in a browser", async () => {
      const { sent, transport } = fake();
      const blobs: Blob[] = [];
      const clicked: HTMLAnchorElement[] = [];
      URL.createObjectURL = vi.fn((b: Blob) => (blobs.push(b), "blob:x"));
      URL.revokeObjectURL = vi.fn();
      vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
        clicked.push(this);
      });
      const library = new LibraryStore(transport);
      render(LibraryView, { library, oncontinued: () => {}, initial: "claude:n1" });
      await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
      await fireEvent.change(screen.getByTestId("library-export"), { target: { value: "markdown" } });
      await waitFor(() => expect(screen.getByTestId("library-exported").textContent).toContain("claude-n1.md"));
      expect(sent.filter((r) => r.type === "exportSession")).toEqual([
        { type: "exportSession", sessionKey: "claude:n1", format: "markdown" },
      ]);
      expect(clicked.map((a) => a.download)).toEqual(["claude-n1.md"]);
      // jsdom's Blob has no text(): read it as a browser would read a file.
      const read = await new Promise<string>((done) => {
        const reader = new FileReader();
        reader.onload = () => done(String(reader.result));
        reader.readAsText(blobs[0]);
      });
      expect(read).toBe("# fix the parser\n");
      expect(blobs[0].type).toBe("text/markdown");
      expect(URL.revokeObjectURL).toHaveBeenCalledWith("blob:x");
      // The control goes back to its label: the same format can be picked again.
      expect((screen.getByTestId("library-export") as HTMLSelectElement).value).toBe("");
    });

    it("has the desktop shell save it, and shows the daemon's error", async () => {
      const { sent, transport } = fake();
      const saved: [string, string][] = [];
      const desktop = {
        ...transport,
        request: transport.request,
        saveExport: async (key: string, format: string) => {
          saved.push([key, format]);
          if (key !== "claude:n1") throw new Error(`unknown session \`${key}\``);
          return saved.length === 1 ? "/home/me/claude-n1.json" : null;
        },
      } as unknown as Transport;
      const library = new LibraryStore(desktop);
      render(LibraryView, { library, oncontinued: () => {}, initial: "claude:n1" });
      await waitFor(() => expect(screen.getAllByTestId("library-turn")).toHaveLength(2));
      await fireEvent.change(screen.getByTestId("library-export"), { target: { value: "json" } });
      await waitFor(() => expect(screen.getByTestId("library-exported").textContent).toContain("/home/me/claude-n1.json"));
      expect(saved).toEqual([["claude:n1", "json"]]);
      expect(sent.some((r) => r.type === "exportSession")).toBe(false);
      // Cancelled in the dialog: nothing is claimed.
      await fireEvent.change(screen.getByTestId("library-export"), { target: { value: "markdown" } });
      await waitFor(() => expect(saved).toHaveLength(2));
      await waitFor(() => expect(screen.queryByTestId("library-exported")).toBeNull());
      await library.exportSession("echo:gone", "markdown");
      expect(library.error).toContain("unknown session `echo:gone`");
    });
  });
});
