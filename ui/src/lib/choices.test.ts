import { describe, expect, it } from "vitest";
import { ChoiceMemory } from "./choices";

function memoryStorage() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
}

describe("ChoiceMemory", () => {
  it("remembers the last agent, model, effort (and account) per workspace", () => {
    const storage = memoryStorage();
    const m = new ChoiceMemory(storage);
    expect(m.get("/w/a")).toBeNull();
    m.set("/w/a", { agent: "claude", model: "opus", effort: "high" });
    m.set("/w/b", { agent: "codex", model: null, effort: null, account: "work" });
    expect(new ChoiceMemory(storage).get("/w/a")).toEqual({ agent: "claude", model: "opus", effort: "high" });
    expect(new ChoiceMemory(storage).get("/w/b")).toEqual({ agent: "codex", model: null, effort: null, account: "work" });
    m.set("/w/a", { agent: "gemini", model: null, effort: "low" });
    expect(m.get("/w/a")).toEqual({ agent: "gemini", model: null, effort: "low" });
    expect(m.get(null)).toBeNull();
  });

  it("survives broken storage", () => {
    const storage = memoryStorage();
    storage.setItem("weft.choices", "{nope");
    expect(new ChoiceMemory(storage).get("/w/a")).toBeNull();
    storage.setItem("weft.choices", JSON.stringify({ "/w/a": { agent: 3 } }));
    expect(new ChoiceMemory(storage).get("/w/a")).toBeNull();
  });
});
