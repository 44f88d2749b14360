import { describe, expect, it } from "vitest";
import { AppStore } from "./app.svelte";
import { FakeTransport } from "./fake-transport";

describe("efforts", () => {
  it("offers the chosen model's efforts and drops one it does not take", async () => {
    const t = new FakeTransport();
    const app = new AppStore(t);
    await app.start();
    await app.chooseAgent("echo");
    expect(app.efforts).toEqual(["low", "high"]);
    app.effort = "high";
    app.model = "echo-2";
    await app.refreshEfforts("echo", "echo-2");
    expect(app.efforts).toEqual(["low"]);
    expect(app.effort).toBeNull();
  });
});
