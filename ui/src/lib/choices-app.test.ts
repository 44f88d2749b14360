import { describe, expect, it } from "vitest";
import type { AccountInfo } from "../generated";
import { AppStore } from "./app.svelte";
import { FakeTransport } from "./fake-transport";

const settle = () => new Promise((r) => setTimeout(r, 10));

describe("AppStore: choices remembered per workspace", () => {
  it("a new session starts with the account last used there too, while it is still the agent's", async () => {
    localStorage.removeItem("weft.choices");
    const t = new FakeTransport();
    const app = new AppStore(t);
    await app.start();
    await app.agentsReady;
    app.accounts.list = [{ id: "work", agent: "echo", label: "Work" } as AccountInfo];
    app.account = "work";
    app.effort = "low";
    expect(await app.send("with an account")).toBe(true);
    expect(t.calls.find((c) => c.verb === "prompt")?.args[0]).toMatchObject({ account: "work", effort: "low" });
    app.newSession();
    await settle();
    expect(app.account).toBe("work");
    expect(app.effort).toBe("low");
    // An account removed since is not picked again.
    app.accounts.list = [];
    app.account = null;
    app.newSession();
    await settle();
    expect(app.account).toBeNull();
    expect(app.effort).toBe("low");
    localStorage.removeItem("weft.choices");
  });
});
