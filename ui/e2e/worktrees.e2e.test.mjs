// Parallel sessions in the desktop window (issue 35): a repository made here with the
// real git, a new session started "in a new worktree" from the composer, its branch in
// the header and the sidebar, then the Review: a hunk commented (the comment reaches the
// agent as a prompt), reverted and the revert undone, and the branch merged into main.
// The echo agent writes the file (`write-file`), asking first.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { allTurnPrompts, byTestId, chooseAgent, launch, phase, screenshot, send, until } from "./harness.mjs";

const git = (dir, ...args) =>
  execFileSync("git", args, {
    cwd: dir,
    env: { ...process.env, GIT_AUTHOR_NAME: "e2e", GIT_AUTHOR_EMAIL: "e2e@example.com", GIT_COMMITTER_NAME: "e2e", GIT_COMMITTER_EMAIL: "e2e@example.com" },
  })
    .toString()
    .trim();

describe("Weft desktop app: a session in its own worktree, reviewed and merged", () => {
  let browser;
  const repo = join(dirname(process.env.WEFT_WORKSPACE_DIR ?? "/tmp/weft-e2e/workspace"), "wt-repo");
  before(async () => {
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(repo, "a.txt"), "the original line\n");
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "first");
    browser = await launch({ workspace: repo });
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  async function allowUntilDone(what) {
    await until(
      browser,
      async () => {
        const allow = await browser.$('[data-testid="allow-once"]');
        if (await allow.isExisting()) await allow.click();
        return (await phase(browser)) === "done";
      },
      what,
      90000,
    );
  }

  it("runs a new session in a worktree, shows its branch, reviews, reverts, comments and merges it", async () => {
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "echo");
    const box = await byTestId(browser, "new-in-worktree");
    await box.waitForExist({ timeout: 10000 });
    if (!(await box.isSelected())) await box.click();
    await send(browser, "write-file a.txt the agent's line");
    await allowUntilDone("the echo turn in its worktree");
    const branch = await byTestId(browser, "session-branch");
    await branch.waitForExist({ timeout: 10000 });
    // Its text, shown or squeezed out of a narrow header (the title names it too).
    const chip = String(await branch.getProperty("textContent"));
    assert.match(chip, /weft\//, "the header names the session's branch");
    const name = chip.replace(/^.*weft\//, "").trim();
    // The repository's own checkout is untouched; the worktree has the change.
    assert.equal(readFileSync(join(repo, "a.txt"), "utf8"), "the original line\n");
    const worktree = await browser.$('[data-testid="worktree"]');
    await until(browser, () => worktree.isExisting(), "the sidebar's worktree row");
    const path = await worktree.getAttribute("data-path");
    assert.equal(readFileSync(join(path, "a.txt"), "utf8"), "the agent's line\n");
    assert.equal(String(await (await byTestId(browser, "worktree-branch")).getProperty("textContent")), `weft/${name}`);
    const key = decodeURIComponent((await browser.execute(() => location.hash)).replace(/^#\/s\//, ""));
    await screenshot(browser, "worktree-session-light");

    // The Review: the session's whole diff, one hunk.
    await (await byTestId(browser, "rail-review")).click();
    const card = await browser.$(`[data-testid="review-item"][data-session-key="${key}"]`);
    await until(browser, () => card.isExisting(), "the session's review card", 60000);
    await (await card.$("button.disclose")).click();
    const hunk = await card.$('[data-testid="review-hunk"]');
    await until(browser, () => hunk.isExisting(), "the session's diff in the review");
    assert.match(await (await card.$('[data-testid="review-file"]')).getAttribute("data-path"), /a\.txt$/);

    // Revert the hunk: the worktree's file as it was; then undo the revert.
    await (await hunk.$('[data-testid="hunk-revert"]')).click();
    await until(browser, async () => (await card.$('[data-testid="review-reverted"]')).isExisting(), "the revert to be reported");
    assert.equal(readFileSync(join(path, "a.txt"), "utf8"), "the original line\n");
    await (await card.$('[data-testid="review-revert-undo"]')).click();
    await until(browser, async () => readFileSync(join(path, "a.txt"), "utf8") === "the agent's line\n", "the revert to be undone");

    // A comment on the hunk reaches the agent as one prompt quoting the file.
    const again = await card.$('[data-testid="review-hunk"]');
    await until(browser, () => again.isExisting(), "the hunk back in the review");
    await (await again.$('[data-testid="hunk-comment"]')).click();
    const comment = await card.$('[data-testid="comment-text"]');
    await comment.setValue("say why this line changed");
    await (await card.$('[data-testid="comment-add"]')).click();
    await (await card.$('[data-testid="review-send-comments"]')).click();
    await until(browser, async () => (await card.$('[data-testid="review-sent"]')).isExisting(), "the comments to be sent");
    await screenshot(browser, "worktree-review-light");

    // Merge the branch into main from the card.
    await (await byTestId(browser, "rail-session")).click();
    await until(browser, async () => (await allTurnPrompts(browser)).some((p) => p.includes("say why this line changed")), "the comment as the session's next prompt", 60000);
    await until(browser, async () => (await phase(browser)) === "done", "the comment's turn to end", 60000);
    await (await byTestId(browser, "rail-review")).click();
    const card2 = await browser.$(`[data-testid="review-item"][data-session-key="${key}"]`);
    await until(browser, () => card2.isExisting(), "the review card again");
    if (!(await card2.$('[data-testid="merge-panel"]').isExisting())) await (await card2.$("button.disclose")).click();
    const panel = await card2.$('[data-testid="merge-panel"]');
    await until(browser, () => panel.isExisting(), "the merge panel");
    await (await panel.$('[data-testid="merge-go"]')).click();
    await until(browser, async () => (await panel.$('[data-testid="merge-done"]')).isExisting(), "the merge to land", 60000);
    assert.equal(readFileSync(join(repo, "a.txt"), "utf8"), "the agent's line\n", "main has the session's change");
    assert.match(git(repo, "log", "-1", "--format=%P"), / /, "a merge commit");
    await screenshot(browser, "worktree-merged-light");
  });
});
