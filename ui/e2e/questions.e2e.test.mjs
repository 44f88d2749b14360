// The kinds of question an agent asks, in the desktop app with the echo agent's
// "survey": a question taking several choices (checkboxes) with an Other box, and one
// taking one choice or free text. What the agent gets back is what was picked and typed.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { allByTestId, byTestId, chooseAgent, lastTurnText, launch, phase, screenshot, send, until } from "./harness.mjs";

let browser;

describe("Weft desktop app: questions (echo agent)", () => {
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession();
  });

  it("answers several choices and free text as asked", async () => {
    await (await byTestId(browser, "new-session")).click();
    await until(browser, async () => (await byTestId(browser, "empty-state")).isExisting(), "a new session");
    await chooseAgent(browser, "echo");
    await send(browser, "a survey please");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    assert.equal(await dialog.getAttribute("data-kind"), "user-input");
    const checks = await allByTestId(browser, "question-check");
    assert.equal(checks.length, 3, "the toppings are checkboxes");
    assert.equal((await allByTestId(browser, "question-choice")).length, 2, "the size is one choice");
    const others = await allByTestId(browser, "question-other");
    assert.equal(others.length, 2, "each question takes free text");
    const submit = await byTestId(browser, "question-submit");
    await checks[0].click();
    await checks[2].click();
    assert.equal(await submit.isEnabled(), false, "the size is not answered yet");
    await others[1].setValue("family");
    await until(browser, () => submit.isEnabled(), "every question answered");
    await screenshot(browser, "questions-survey-light");
    await submit.click();
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(
      browser,
      async () => (await lastTurnText(browser)).includes("You answered toppings=[cheese, basil] size=[family]."),
      "the picks and the text in the reply",
    );
    await until(browser, async () => (await phase(browser)) === "done", "the survey turn to finish");
  });

  it("takes several choices from the keyboard and Other text beside them", async () => {
    await send(browser, "another survey");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    await until(browser, async () => (await dialog.getAttribute("data-keys")) === "ready", "the dialog to take keys");
    // Numbers toggle the toppings (the first question without an answer).
    await browser.keys("2");
    await browser.keys("3");
    const checked = await browser.execute(() =>
      [...document.querySelectorAll('[data-testid="question-check"]')].map((c) => c instanceof HTMLInputElement && c.checked),
    );
    assert.deepEqual(checked, [false, true, true]);
    const others = await allByTestId(browser, "question-other");
    await others[0].setValue("extra garlic");
    const radios = await allByTestId(browser, "question-choice");
    await radios[1].click();
    await (await byTestId(browser, "question-submit")).click();
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(
      browser,
      async () => (await lastTurnText(browser)).includes("You answered toppings=[olives, basil, extra garlic] size=[large]."),
      "the keyboard's picks in the reply",
    );
    await until(browser, async () => (await phase(browser)) === "done", "the second survey to finish");
  });
});
