// The desktop app end to end with the echo agent (no account needed).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  allByTestId,
  allTurnPrompts,
  byTestId,
  chooseAgent,
  askWhileAway,
  closeApp,
  lastTurnText,
  launch,
  notifying,
  phase,
  screenshot,
  send,
  setTheme,
  texts,
  until,
} from "./harness.mjs";

let browser;
let firstSession;

async function newSession() {
  await (await byTestId(browser, "new-session")).click();
  await until(browser, async () => (await byTestId(browser, "empty-state")).isExisting(), "a new session");
}

async function waitDone(what) {
  await until(browser, async () => (await phase(browser)) === "done", what);
}

describe("Weft desktop app (echo agent)", () => {
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession();
  });

  it("opens the workspace given on the command line", async () => {
    const workspaces = await allByTestId(browser, "workspace");
    assert.ok(workspaces.length >= 1, "a workspace in the sidebar");
    const dir = process.env.WEFT_WORKSPACE_DIR?.split("/").pop() ?? "";
    await until(
      browser,
      async () => (await (await byTestId(browser, "session-title")).getProperty("textContent")).includes(`New session in`),
      "the new-session title",
    );
    assert.match(await (await byTestId(browser, "session-title")).getProperty("textContent"), new RegExp(`New session in .*${dir}`));
    // Another suite of the run may have used another agent in this workspace last.
    await chooseAgent(browser, "echo");
    await screenshot(browser, "01-start-light");
  });

  it("runs an echo turn: streamed text, tool rows, plan and usage", async () => {
    await send(browser, "hello weft");
    await until(browser, async () => (await allByTestId(browser, "session-item")).length >= 1, "the session in the sidebar");
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: hello weft"), "the streamed reply");
    await waitDone("the turn to finish");
    const rows = await allByTestId(browser, "tool-row");
    assert.ok(rows.length >= 2, `tool rows: ${rows.length}`);
    const statuses = [];
    for (const r of rows) statuses.push(await r.getAttribute("data-status"));
    assert.ok(statuses.includes("done") && statuses.includes("failed"), `statuses ${statuses}`);
    const steps = await allByTestId(browser, "plan-step");
    assert.equal(steps.length, 3);
    assert.ok(await (await byTestId(browser, "usage")).isExisting(), "usage shown");
    assert.ok(await (await byTestId(browser, "artifact")).isExisting(), "artifact shown");
    // Expand the failed call and see its error.
    const failed = await browser.$('[data-testid="tool-row"][data-status="failed"] [data-testid="tool-row-toggle"]');
    await failed.click();
    await until(browser, async () => (await (await byTestId(browser, "tool-result")).getText()).includes("cannot read"), "the failed call's error");
    firstSession = await (await browser.$('[data-testid="session-item"][data-selected="true"]')).getAttribute("data-session-key");
    assert.ok(firstSession?.startsWith("echo:"), `selected session ${firstSession}`);
    await screenshot(browser, "02-transcript-light");
  });

  it("answers a permission dialog with allow", async () => {
    await send(browser, "permission please");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    assert.equal(await dialog.getAttribute("data-kind"), "permission");
    assert.equal(await (await byTestId(browser, "permission-tool")).getText(), "write_note");
    assert.match(await (await byTestId(browser, "permission-input")).getText(), /echo-note\.md/);
    await screenshot(browser, "03-permission-light");
    await (await byTestId(browser, "allow-once")).click();
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("I wrote the note."), "the allowed write");
    await waitDone("the allowed turn to finish");
  });

  it("answers a permission dialog with deny on another turn", async () => {
    await send(browser, "permission again");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    await (await byTestId(browser, "deny")).click();
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("You denied the note"), "the denied write");
    await waitDone("the denied turn to finish");
    const denied = await browser.$('[data-testid="tool-row"][data-tool-id="note-1"][data-status="failed"]');
    assert.ok(await denied.isExisting(), "the denied call is marked failed");
  });

  it("answers a question", async () => {
    await send(browser, "a question for you");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    assert.equal(await dialog.getAttribute("data-kind"), "user-input");
    const choices = await allByTestId(browser, "question-choice");
    assert.equal(choices.length, 3);
    await choices[2].click();
    await (await byTestId(browser, "question-submit")).click();
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("You picked blue."), "the answer in the reply");
    await waitDone("the question turn to finish");
  });

  it("notifies of a question asked while the window shows another place; the click opens its session", { skip: !notifying && "no notification server (scripts/e2e-app.sh starts dunst)" }, async () => {
    // A session of its own (the first one's history is checked after a restart below).
    await newSession();
    await send(browser, "a session to be asked in");
    await waitDone("the new session's first turn");
    const key = await (await browser.$('[data-testid="session-item"][data-selected="true"]')).getAttribute("data-session-key");
    assert.notEqual(key, firstSession);
    const notice = await askWhileAway(browser, key, "a question for you", "echo needs an answer");
    assert.equal(notice.appname, "Weft");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    await (await allByTestId(browser, "question-choice"))[0].click();
    await (await byTestId(browser, "question-submit")).click();
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await waitDone("the notified question's turn to finish");
  });

  it("steers a running turn", async () => {
    await newSession();
    await send(browser, "slow steer me");
    await until(browser, async () => (await phase(browser)) === "streaming", "the slow turn to stream");
    await (await byTestId(browser, "mode-steer")).click();
    await send(browser, "go left");
    await until(browser, async () => (await texts(browser, "local-note")).some((n) => n.includes("go left")), "the steer noted");
    await until(browser, async () => (await lastTurnText(browser)).includes('Steered: "go left"'), "the agent taking the steer", 60000);
    await (await byTestId(browser, "stop")).click();
    await waitDone("the steered turn to stop");
  });

  it("stops a running turn", async () => {
    await newSession();
    await send(browser, "slow story please");
    await until(browser, async () => (await phase(browser)) === "streaming", "the slow turn to stream");
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo"), "some text first");
    await (await byTestId(browser, "stop")).click();
    await waitDone("the stopped turn to end");
    assert.ok(await (await byTestId(browser, "turn-incomplete")).isExisting(), "the turn is marked incomplete");
    assert.ok(!(await (await byTestId(browser, "stop")).isExisting()), "no stop button once stopped");
  });

  it("queues two prompts and runs them in order", async () => {
    await newSession();
    await send(browser, "slow first");
    await until(browser, async () => (await phase(browser)) === "streaming", "the first turn to stream");
    await (await byTestId(browser, "mode-queue")).click();
    await send(browser, "queued one");
    await send(browser, "queued two");
    await until(browser, async () => (await allByTestId(browser, "queued-prompt")).length === 2, "two waiting prompts");
    assert.deepEqual(await texts(browser, "queued-prompt"), ["queued one", "queued two"]);
    await screenshot(browser, "04-queue-light");
    await until(
      browser,
      async () => {
        return (await phase(browser)) === "done" && (await lastTurnText(browser)).includes("Echo: queued two");
      },
      "all three turns to finish",
      60000,
    );
    assert.deepEqual(await allTurnPrompts(browser), ["slow first", "queued one", "queued two"]);
  });

  it("shows the history after a restart", async () => {
    await browser.deleteSession();
    browser = await launch();
    const item = await browser.$(`[data-testid="session-item"][data-session-key="${firstSession}"] button`);
    await item.waitForExist({ timeout: 30000 });
    await item.click();
    await until(browser, async () => (await lastTurnText(browser)).includes("You picked blue."), "the last turn of history");
    assert.deepEqual(await allTurnPrompts(browser), ["hello weft", "permission please", "permission again", "a question for you"]);
    await screenshot(browser, "05-history-light");
    await setTheme(browser, "dark");
    await screenshot(browser, "06-history-dark");
    await setTheme(browser, "system");
  });

  it("finds a past turn by its words and opens its session", async () => {
    await (await byTestId(browser, "new-session")).click();
    const search = await byTestId(browser, "session-search");
    await search.click();
    await search.setValue("permission aga");
    await until(browser, async () => (await allByTestId(browser, "search-hit")).length === 1, "one transcript hit");
    const hit = await byTestId(browser, "search-hit");
    assert.equal(await hit.getAttribute("data-session-key"), firstSession);
    const marks = await browser.execute(() => [...document.querySelectorAll('[data-testid="search-hit"] mark')].map((m) => m.textContent));
    assert.ok(marks.includes("permission") && marks.includes("again"), `marked: ${marks}`);
    await screenshot(browser, "07-search-light");
    await (await hit.$("button")).click();
    // The hit's session opens (the list itself is filtered by the same words).
    await until(browser, async () => (await allTurnPrompts(browser)).includes("permission again"), "the hit's session open");
    await search.clearValue();
  });

  it("closing the window mid-turn ends no turn: the next window shows it live, and it finishes", async () => {
    // The session list shows every session again: the search above filtered it (and
    // clearValue empties the box without an input event), so type the box empty.
    const search = await byTestId(browser, "session-search");
    await search.setValue("x");
    await browser.keys("Backspace");
    await until(browser, async () => (await allByTestId(browser, "search-hits")).length === 0, "the search to be cleared");
    await newSession();
    // The echo agent streams a "slow" prompt's reply word by word (8 times over, 150 ms
    // a word): about 40 s for this one, longer than closing and starting the app takes.
    const words = "slow walk through the long quiet valley past the river and the old mill then up the hill to the house where the lamps are lit and supper waits for everyone";
    await send(browser, words);
    await until(browser, async () => (await phase(browser)) === "streaming", "the slow turn to stream");
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: slow"), "the reply to start");
    const selected = await browser.$('[data-testid="session-item"][data-selected="true"]');
    await until(browser, () => selected.isExisting(), "the new session selected in the list");
    const key = await selected.getAttribute("data-session-key");
    const before = (await lastTurnText(browser)).length;
    browser = await closeApp(browser);

    browser = await launch();
    const item = await browser.$(`[data-testid="session-item"][data-session-key="${key}"] button`);
    await item.waitForExist({ timeout: 30000 });
    await item.click();
    // Still live: streaming, with more text than the closed window saw, and growing.
    await until(browser, async () => (await lastTurnText(browser)).length > before, "the text the turn streamed meanwhile");
    assert.equal(await phase(browser), "streaming", "the turn is still running");
    const seen = (await lastTurnText(browser)).length;
    await until(browser, async () => (await lastTurnText(browser)).length > seen, "the text to keep growing in the new window");
    await screenshot(browser, "08-turn-live-after-reopen-light");
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish", 120000);
    const text = await lastTurnText(browser);
    assert.equal(text.split(`Echo: ${words}`).length - 1, 8, `the whole reply:\n${text}`);
    const replies = await allByTestId(browser, "turn-text");
    assert.equal(await replies.at(-1).getAttribute("data-phase"), "done");
    assert.equal(await (await byTestId(browser, "turn-incomplete")).isExisting(), false, "not marked incomplete");
    assert.equal(await (await byTestId(browser, "turn-error")).isExisting(), false, "no error");
  });
});
