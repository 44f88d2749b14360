import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import { LibraryStore, cost } from "../library.svelte";
import { fake } from "../test-support/library";
import UsagePage from "./UsagePage.svelte";

describe("UsagePage", () => {
  it("shows usage per day with an unknown cost, never $0", async () => {
    const { transport } = fake();
    const library = new LibraryStore(transport);
    render(UsagePage, { library });
    await waitFor(() => expect(screen.getAllByTestId("usage-row")).toHaveLength(1));
    expect(screen.getByTestId("usage-row").textContent).toContain("unknown");
    expect(screen.getByTestId("usage-unpriced").textContent).toContain("mock-model");
    expect(cost({ costUsd: 0.5 } as never)).toBe("$0.50");
  });

  it("shows Claude's active 5-hour block with its burn rate and projection", async () => {
    const { sent, transport } = fake();
    const library = new LibraryStore(transport);
    render(UsagePage, { library });
    await waitFor(() => expect(screen.getByTestId("usage-block-active")).toBeTruthy());
    expect(sent.some((r) => r.type === "usage" && r.by === "block")).toBe(true);
    const rate = screen.getByTestId("usage-burn-rate").textContent ?? "";
    expect(rate).toContain("30 tokens/min");
    expect(rate).toContain("$3.75/h");
    expect(rate).toContain("projected 8700 tokens, $16.25");
    expect(screen.getAllByTestId("usage-block-row")).toHaveLength(1);
  });
});
