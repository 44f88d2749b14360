// Accounts in the desktop app: an api-key account added in the Accounts view (its
// secret typed into the dialog, kept in the OS secret store — scripts/e2e-app.sh gives
// the app a D-Bus session with an unlocked throwaway GNOME Keyring), picked in the
// composer for a new session; the real `claude` CLI then calls this test's own
// Anthropic endpoint, which records the key it was given.
// Skipped without the claude CLI or the keyring (CI has both).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { byTestId, lastTurnText, launch, phase, screenshot, send, until } from "./harness.mjs";

const ready = process.env.WEFT_E2E_CLAUDE === "1" && process.env.WEFT_E2E_KEYRING === "1";

/**
 * A minimal Anthropic Messages endpoint: one streamed text reply; every request's key
 * kept. `headers` are added to each reply (the API's rate-limit headers, from which
 * claude on a subscription token makes its `rate_limit_event`).
 */
function anthropic(reply, headers = {}, status = 200) {
  const keys = [];
  const prompts = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (!req.url?.startsWith("/v1/messages")) {
        res.writeHead(404).end();
        return;
      }
      keys.push(req.headers["x-api-key"] ?? req.headers.authorization ?? null);
      prompts.push(body);
      if (status !== 200) {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "rate limited" } }));
        return;
      }
      let stream = false;
      try {
        stream = JSON.parse(body).stream === true;
      } catch {
        // not JSON: answered as a plain message
      }
      const message = { id: "msg_acct", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 0 } };
      if (!stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ...message, content: [{ type: "text", text: reply }], stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 4 } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", ...headers });
      const ev = (name, data) => res.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
      ev("message_start", { message });
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: reply } });
      ev("content_block_stop", { index: 0 });
      ev("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 4 } });
      ev("message_stop", {});
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, keys, prompts, url: `http://127.0.0.1:${server.address().port}` })));
}

describe("Weft desktop app: accounts", { skip: ready ? false : "no claude CLI or no keyring" }, () => {
  let browser;
  let endpoint;
  let limited;
  let spent;
  /** The api-key account the first test adds (on `endpoint`). */
  let keyAccount;
  before(async () => {
    endpoint = await anthropic("Hello from the account's endpoint.");
    const reset = String(Math.floor(Date.now() / 1000) + 2 * 3600);
    limited = await anthropic("Hello from the subscription.", {
      "anthropic-ratelimit-unified-status": "allowed_warning",
      "anthropic-ratelimit-unified-reset": reset,
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
      "anthropic-ratelimit-unified-5h-status": "allowed_warning",
      "anthropic-ratelimit-unified-5h-utilization": "0.91",
      "anthropic-ratelimit-unified-5h-reset": reset,
    });
    // A subscription whose five-hour window is used up: every call is refused (429) with
    // the API's headers saying so, from which the real claude makes a rejected
    // rate_limit_event.
    spent = await anthropic("never", {
      "anthropic-ratelimit-unified-status": "rejected",
      "anthropic-ratelimit-unified-reset": reset,
      "anthropic-ratelimit-unified-representative-claim": "five_hour",
      "anthropic-ratelimit-unified-5h-status": "rejected",
      "anthropic-ratelimit-unified-5h-utilization": "1.0",
      "anthropic-ratelimit-unified-5h-reset": reset,
    }, 429);
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
    endpoint?.server.close();
    limited?.server.close();
    spent?.server.close();
  });

  it("adds an api-key account in the Accounts view, picks it for a session, and the endpoint sees its key", async () => {
    const secret = `sk-e2e-${randomBytes(8).toString("hex")}`;
    await (await byTestId(browser, "rail-settings")).click();
    const view = await byTestId(browser, "accounts-view");
    await view.waitForDisplayed({ timeout: 30000 });
    await (await byTestId(browser, "account-agent")).selectByAttribute("value", "claude");
    await (await byTestId(browser, "account-kind")).selectByAttribute("value", "api-key");
    await (await byTestId(browser, "account-label-input")).setValue("e2e key");
    await (await byTestId(browser, "account-base-url")).setValue(endpoint.url);
    // The turn's own knobs are public variables of the account (the ambient ones are
    // dropped on an account).
    await (await byTestId(browser, "account-env")).setValue(
      "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\nCLAUDE_CODE_MAX_RETRIES=0\nIS_SANDBOX=1",
    );
    await (await byTestId(browser, "account-secret")).setValue(secret);
    await (await byTestId(browser, "account-add-submit")).click();
    await (await byTestId(browser, "account-added")).waitForDisplayed({ timeout: 30000 });
    assert.equal(await (await byTestId(browser, "account-secret")).getValue(), "", "the secret field is cleared");
    const row = await byTestId(browser, "account-row");
    assert.match(await row.getText(), /e2e key/);
    assert.doesNotMatch(await browser.execute(() => document.body.innerText), new RegExp(secret));
    await screenshot(browser, "30-accounts-view-light");
    await (await byTestId(browser, "rail-session")).click();

    await (await byTestId(browser, "new-session")).click();
    const picker = await byTestId(browser, "agent-picker");
    await until(browser, async () => (await browser.$('[data-testid="agent-picker"] option[data-agent="claude"]')).isEnabled(), "claude to be listed as installed");
    await picker.selectByAttribute("data-agent", "claude");
    const accountPicker = await byTestId(browser, "account-picker");
    await accountPicker.waitForDisplayed({ timeout: 30000 });
    const id = await browser.execute(
      () => [...document.querySelectorAll('[data-testid="account-picker"] option')].find((o) => o.textContent?.startsWith("e2e key"))?.value ?? "",
    );
    assert.match(id, /^acct-/);
    keyAccount = id;
    await accountPicker.selectByAttribute("value", id);
    await send(browser, "hello on my account");
    await until(browser, async () => (await lastTurnText(browser)).includes("Hello from the account's endpoint."), "the reply from the account's endpoint", 90000);
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish", 90000);
    assert.ok(endpoint.keys.length > 0, "the account's endpoint was called");
    assert.ok(endpoint.keys.every((k) => k === secret), `every call carried the account's key: ${JSON.stringify(endpoint.keys.map((k) => k === secret))}`);
    await until(browser, async () => (await (await byTestId(browser, "session-account")).getProperty("textContent")) === "e2e key", "the session header to show the account");
    await screenshot(browser, "31-session-on-account-light");

    // The turn's usage, rolled up for the account and the day, in the Accounts view.
    await (await byTestId(browser, "rail-settings")).click();
    await (await byTestId(browser, "accounts-view")).waitForDisplayed({ timeout: 30000 });
    const today = new Date().toISOString().slice(0, 10);
    await until(
      browser,
      async () => {
        const day = await browser.$(`[data-testid="account-row"][data-account="${id}"] [data-testid="account-usage-day"]`);
        return (await day.isExisting()) && new RegExp(`^${today} · 1 turn · [\\d,]+ in · [\\d,]+ out`).test(await browser.execute((el) => el.textContent ?? "", day));
      },
      "the account's usage of today",
    );
    await (await byTestId(browser, "rail-session")).click();
  });

  it("shows a Claude account's limit window after its rate_limit_event", async () => {
    const token = `sk-ant-oat01-e2e-${randomBytes(8).toString("hex")}`;
    await (await byTestId(browser, "rail-settings")).click();
    await (await byTestId(browser, "accounts-view")).waitForDisplayed({ timeout: 30000 });
    await (await byTestId(browser, "account-agent")).selectByAttribute("value", "claude");
    await (await byTestId(browser, "account-kind")).selectByAttribute("value", "setup-token");
    await (await byTestId(browser, "account-label-input")).setValue("e2e subscription");
    await (await byTestId(browser, "account-base-url")).setValue(limited.url);
    await (await byTestId(browser, "account-env")).setValue("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\nCLAUDE_CODE_MAX_RETRIES=0\nIS_SANDBOX=1");
    await (await byTestId(browser, "account-secret")).setValue(token);
    await (await byTestId(browser, "account-add-submit")).click();
    await until(browser, async () => (await (await byTestId(browser, "account-added")).getText()).includes("e2e subscription"), "the subscription account added");
    await (await byTestId(browser, "rail-session")).click();

    await (await byTestId(browser, "new-session")).click();
    const picker = await byTestId(browser, "agent-picker");
    await picker.selectByAttribute("data-agent", "claude");
    const accountPicker = await byTestId(browser, "account-picker");
    await accountPicker.waitForDisplayed({ timeout: 30000 });
    const id = await browser.execute(
      () => [...document.querySelectorAll('[data-testid="account-picker"] option')].find((o) => o.textContent?.startsWith("e2e subscription"))?.value ?? "",
    );
    await accountPicker.selectByAttribute("value", id);
    await send(browser, "hello on my subscription");
    await until(browser, async () => (await lastTurnText(browser)).includes("Hello from the subscription."), "the subscription's reply", 90000);
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish", 90000);
    assert.ok(limited.keys.length > 0 && limited.keys.every((k) => k === `Bearer ${token}`), "every call carried the token");

    await (await byTestId(browser, "rail-settings")).click();
    await until(
      browser,
      async () => {
        const row = await browser.$(`[data-testid="account-row"][data-account="${id}"] [data-testid="account-limits"]`);
        return (await row.isExisting()) && /five_hour 91% \(allowed_warning\) · resets in 2h/.test(await row.getText());
      },
      "the account's five_hour window in the Accounts view",
    );
    await screenshot(browser, "32-account-limits-light");
    await (await byTestId(browser, "rail-session")).click();
  });

  it("offers to switch accounts and continue when a session's account hit its limit", async () => {
    assert.ok(keyAccount, "the first test's api-key account");
    const token = `sk-ant-oat01-e2e-${randomBytes(8).toString("hex")}`;
    await (await byTestId(browser, "rail-settings")).click();
    await (await byTestId(browser, "accounts-view")).waitForDisplayed({ timeout: 30000 });
    await (await byTestId(browser, "account-agent")).selectByAttribute("value", "claude");
    await (await byTestId(browser, "account-kind")).selectByAttribute("value", "setup-token");
    await (await byTestId(browser, "account-label-input")).setValue("e2e spent");
    await (await byTestId(browser, "account-base-url")).setValue(spent.url);
    await (await byTestId(browser, "account-env")).setValue("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\nCLAUDE_CODE_MAX_RETRIES=0\nIS_SANDBOX=1");
    await (await byTestId(browser, "account-secret")).setValue(token);
    await (await byTestId(browser, "account-add-submit")).click();
    await until(browser, async () => (await (await byTestId(browser, "account-added")).getText()).includes("e2e spent"), "the spent account added");
    const spentId = (await (await byTestId(browser, "account-added")).getText()).match(/\((acct-[^)]+)\)/)?.[1];
    await (await byTestId(browser, "rail-session")).click();

    await (await byTestId(browser, "new-session")).click();
    await (await byTestId(browser, "agent-picker")).selectByAttribute("data-agent", "claude");
    const accountPicker = await byTestId(browser, "account-picker");
    await accountPicker.waitForDisplayed({ timeout: 30000 });
    await accountPicker.selectByAttribute("value", spentId);
    await send(browser, "continue-me-elsewhere");
    const notice = await byTestId(browser, "limit-notice");
    await until(browser, async () => notice.isExisting(), "the limit notice", 90000);
    assert.match(await (await byTestId(browser, "limit-notice-window")).getText(), /^five_hour (\d+% )?\(rejected\) · resets in 2h$/);
    assert.ok(spent.keys.length > 0 && spent.keys.every((k) => k === `Bearer ${token}`), "the spent account's calls carried its token");
    await screenshot(browser, "35-limit-notice-light");

    await (await byTestId(browser, "limit-switch-account")).selectByAttribute("value", keyAccount);
    const before = endpoint.prompts.length;
    await (await byTestId(browser, "limit-switch")).click();
    // The cut-short prompt runs again on the other account, in the same Weft session.
    await until(browser, async () => (await lastTurnText(browser)).includes("Hello from the account's endpoint."), "the reply on the other account", 90000);
    assert.ok(endpoint.prompts.slice(before).some((b) => b.includes("continue-me-elsewhere")), "the other account's endpoint got the prompt again");
    await until(browser, async () => (await (await byTestId(browser, "session-account")).getProperty("textContent")) === "e2e key", "the header to show the new account");
    await until(browser, async () => !(await notice.isExisting()), "the notice to go with the new turn");
  });
});
