import { beforeEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";
import { conflictPrompt, proposeMessage } from "../worktrees.svelte";
import MergePanel from "./MergePanel.svelte";

async function inWorktree() {
  const t = new FakeTransport();
  const app = new AppStore(t);
  await app.start();
  app.newSession("/work/demo");
  app.newInWorktree = true;
  await app.send("rewrite the parser");
  await app.refreshSessions();
  const info = app.sessions.find((s) => s.worktree)!;
  render(MergePanel, { app, info: { ...info, phase: "idle" }, prompts: ["rewrite the parser", "and its tests"] });
  return { t, app, info };
}

describe("MergePanel", () => {
  beforeEach(() => localStorage.clear());

  it("proposes a message from the turns, merges with the mode chosen, and says where it landed", async () => {
    const { t, info } = await inWorktree();
    const message = screen.getByTestId("merge-message") as HTMLTextAreaElement;
    expect(message.value).toBe("rewrite the parser\n\n- and its tests\n");
    await fireEvent.input(message, { target: { value: "Parser: a rewrite" } });
    await fireEvent.change(screen.getByTestId("merge-mode"), { target: { value: "squash" } });
    await fireEvent.click(screen.getByTestId("merge-go"));
    await waitFor(() => expect(screen.getByTestId("merge-done").textContent).toContain("landed in main as 0123456789"));
    expect(t.calls.find((c) => c.verb === "mergeSession")?.args[0]).toEqual({
      sessionKey: info.sessionKey,
      mode: "squash",
      message: "Parser: a rewrite",
      push: false,
      pr: false,
    });
  });

  it("lists conflicts and hands them to the session's agent as one prompt", async () => {
    const { t, info } = await inWorktree();
    t.mergeOutcome = { base: "main", branch: info.worktree!.branch, commit: null, conflicts: [{ path: "src/parse.rs", hunks: ["<<<<<<< HEAD\na\n=======\nb\n>>>>>>> weft/x\n"] }], checks: [] };
    await fireEvent.change(screen.getByTestId("merge-remote"), { target: { value: "pr" } });
    await fireEvent.click(screen.getByTestId("merge-go"));
    await waitFor(() => expect(screen.getByTestId("merge-conflicts")).toBeTruthy());
    expect(t.calls.find((c) => c.verb === "mergeSession")?.args[0]).toMatchObject({ push: true, pr: true });
    expect(screen.getAllByTestId("merge-conflict").map((el) => el.dataset.path)).toEqual(["src/parse.rs"]);
    await fireEvent.click(screen.getByTestId("merge-hand-to-agent"));
    await waitFor(() => expect((screen.getByTestId("merge-hand-to-agent") as HTMLButtonElement).disabled).toBe(true));
    const sent = t.calls.filter((c) => c.verb === "prompt").pop()?.args[0] as { sessionKey: string; prompt: string };
    expect(sent.sessionKey).toBe(info.sessionKey);
    expect(sent.prompt).toContain("src/parse.rs");
    expect(sent.prompt).toContain("=======\nb");
  });

  it("shows why the daemon refused", async () => {
    const { t } = await inWorktree();
    const served = t.request.bind(t);
    t.request = (async (r) => {
      if (r.type === "mergeSession") throw new Error("/work/demo has uncommitted changes; commit or stash them before merging weft/x into it");
      return served(r);
    }) as typeof t.request;
    await fireEvent.click(screen.getByTestId("merge-go"));
    await waitFor(() => expect(screen.getByTestId("merge-error").textContent).toContain("uncommitted changes"));
  });
});

describe("merge texts", () => {
  it("proposes the title as the subject and each other prompt as a line", () => {
    expect(proposeMessage("", ["fix it\nplease", "", "fix it"])).toBe("fix it\n");
    expect(proposeMessage("Title", ["a", "b"])).toBe("Title\n\n- a\n- b\n");
  });

  it("quotes every conflicting block", () => {
    const p = conflictPrompt({ base: "main", branch: "weft/x", commit: null, conflicts: [{ path: "a", hunks: ["1\n", "2\n"] }], checks: [] });
    expect(p).toContain("### a\n```\n1\n```\n```\n2\n```");
    expect(p).toMatch(/^Merging weft\/x into main conflicts in 1 file /);
  });

  it("shows the checks of the pull request it opened", async () => {
    const { t, info } = await inWorktree();
    t.mergeOutcome = {
      base: "main",
      branch: info.worktree!.branch,
      commit: "0123456789abcdef",
      conflicts: [],
      pr: "https://example.invalid/pr/1",
      checks: [{ name: "build", state: "PENDING", bucket: "pending", link: "https://example.invalid/run/7" }],
    };
    await fireEvent.change(screen.getByTestId("merge-remote"), { target: { value: "pr" } });
    await fireEvent.click(screen.getByTestId("merge-go"));
    await waitFor(() => expect(screen.getByTestId("merge-pr").textContent).toContain("example.invalid/pr/1"));
    const check = screen.getByTestId("merge-check");
    expect(check.dataset.bucket).toBe("pending");
    expect(check.textContent).toContain("build");
  });
});
