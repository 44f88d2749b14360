import { describe, expect, it } from "vitest";
import { flushSync } from "svelte";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { SlashCommand } from "../../generated";
import { FakeTransport } from "../fake-transport";
import { SessionView } from "../session-view.svelte";
import Harness from "./SlashMenuHarness.test.svelte";

const cmd = (name: string, description: string, source: SlashCommand["source"] = "builtin"): SlashCommand => ({
  name,
  description,
  source,
});

function view(commands: SlashCommand[]) {
  const t = new FakeTransport();
  const v = new SessionView(t.addSession(), t);
  v.current.commands = commands;
  return v;
}

const commands = [
  cmd("compact", "Clear history but keep a summary"),
  cmd("context", "Show context usage"),
  cmd("ship", "Ship the branch", "user"),
];

describe("SlashMenu", () => {
  it("offers the agent's commands on / with descriptions, filtered as the name is typed", async () => {
    render(Harness, { view: view(commands) });
    const box = screen.getByTestId("harness-input") as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: "/" } });
    const names = () => [...screen.getByTestId("slash-menu").querySelectorAll("li")].map((li) => li.dataset.command);
    expect(names()).toEqual(["compact", "context", "ship"]);
    expect(screen.getByTestId("slash-menu").textContent).toContain("Clear history but keep a summary");
    expect(screen.getByTestId("command-source").textContent).toBe("user");
    await fireEvent.input(box, { target: { value: "/co" } });
    expect(names()).toEqual(["compact", "context"]);
    // Tab completes the selected one; ArrowDown moves.
    await fireEvent.keyDown(box, { key: "ArrowDown" });
    await fireEvent.keyDown(box, { key: "Tab" });
    expect(box.value).toBe("/context ");
    // With arguments being typed, the menu is out of the way.
    expect(screen.queryByTestId("slash-menu")).toBeNull();
  });

  it("lets Enter through for a name typed in full, and Escape dismisses", async () => {
    render(Harness, { view: view(commands) });
    const box = screen.getByTestId("harness-input") as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: "/compact" } });
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(screen.getByTestId("harness-sent").textContent).toBe("/compact");
    await fireEvent.input(box, { target: { value: "/sh" } });
    await fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("/ship ");
    await fireEvent.input(box, { target: { value: "/c" } });
    await fireEvent.keyDown(box, { key: "Escape" });
    flushSync();
    expect(screen.queryByTestId("slash-menu")).toBeNull();
  });

  it("offers the agent's own commands in a new session, until a turn reported the session's", async () => {
    const own = [cmd("plan", "Plan mode"), cmd("undo", "Undo the last turn"), cmd("compact", "Summarize")];
    const names = () => [...screen.getByTestId("slash-menu").querySelectorAll("li")].map((li) => li.dataset.command);
    const first = render(Harness, { view: null, agentCommands: own });
    await fireEvent.input(screen.getByTestId("harness-input"), { target: { value: "/" } });
    expect(names()).toEqual(["plan", "undo", "compact"]);
    first.unmount();
    render(Harness, { view: view(commands), agentCommands: own });
    await fireEvent.input(screen.getByTestId("harness-input"), { target: { value: "/" } });
    expect(names()).toEqual(["compact", "context", "ship"]);
  });

  it("shows nothing for a session whose agent reported no commands", async () => {
    render(Harness, { view: view([]) });
    await fireEvent.input(screen.getByTestId("harness-input"), { target: { value: "/" } });
    expect(screen.queryByTestId("slash-menu")).toBeNull();
  });
});
