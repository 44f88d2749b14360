import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { AccountInfo, AccountSwitch, ClientRequest } from "../../generated";
import { AccountsStore } from "../accounts.svelte";
import type { Transport } from "../transport";
import AccountLimitNotice from "./AccountLimitNotice.svelte";
import AccountSwitchWarning from "./AccountSwitchWarning.svelte";

const account = (a: Partial<AccountInfo>): AccountInfo => ({
  id: "acct-1", agent: "claude", kind: "setup-token", label: "sub", homeDir: null, baseUrl: null, protocol: null,
  models: [], env: {}, secret: { type: "store" }, secretVar: null, limits: [], createdAt: 1, updatedAt: 1, ...a,
});
const now = Date.now();
const spent = { window: "five_hour", status: "rejected", usedPercent: 100, resetsAt: now + 2 * 3_600_000, seenAt: now };
const reply = (r: Partial<AccountSwitch>): AccountSwitch => ({
  sessionKey: "claude:s1", from: "acct-1", to: null, warning: null, switched: false, handover: false, taskId: null, ...r,
});

/** Answers the account verbs; a switch to the gateway account needs confirmation. */
function fake() {
  const sent: ClientRequest[] = [];
  const list = [
    account({ id: "acct-1", label: "sub", limits: [spent] }),
    account({ id: "acct-2", label: "other sub", limits: [{ ...spent, window: "seven_day" }] }),
    account({ id: "acct-3", label: "work key", kind: "api-key" }),
    account({ id: "acct-4", label: "gateway", kind: "gateway" }),
    account({ id: "acct-5", agent: "codex", label: "codex key" }),
  ];
  let auto = false;
  const request = async (r: ClientRequest): Promise<unknown> => {
    sent.push(r);
    switch (r.type) {
      case "listAccounts":
        return list;
      case "switchAccount":
        if (r.account === "acct-4" && !r.confirm) return reply({ to: r.account, warning: "Claude's thinking is bound to its provider: a new agent session with a handover" });
        return reply({ to: r.account, switched: true, handover: r.confirm, taskId: r.resume ? "t2" : null });
      case "checkAccountSwitch":
        return reply({ to: r.account, warning: r.account === "acct-4" ? "needs a handover" : null });
      case "getAutoSwitch":
        return { sessionKey: r.sessionKey, enabled: auto };
      case "setAutoSwitch":
        auto = r.enabled;
        return { sessionKey: r.sessionKey, enabled: auto };
      default:
        throw { code: "badRequest", message: `unexpected ${r.type}` };
    }
  };
  return { sent, accounts: new AccountsStore({ request } as unknown as Transport) };
}

describe("AccountLimitNotice", () => {
  it("offers the agent's accounts with capacity and switches and continues on one", async () => {
    const { sent, accounts } = fake();
    await accounts.refresh();
    render(AccountLimitNotice, { accounts, sessionKey: "claude:s1", agent: "claude", account: "acct-1", hit: spent, busy: false });
    expect(screen.getByTestId("limit-notice-window").textContent).toBe("five_hour 100% (rejected) · resets in 2h");
    const options = [...screen.getByTestId("limit-switch-account").querySelectorAll("option")].map((o) => o.value);
    // Not its own, not one whose window is used up too, not another agent's; the own login last.
    expect(options).toEqual(["acct-3", "acct-4", "ambient"]);
    await fireEvent.click(screen.getByTestId("limit-switch"));
    await waitFor(() => expect(sent.find((r) => r.type === "switchAccount")).toMatchObject({ sessionKey: "claude:s1", account: "acct-3", resume: true, confirm: false }));
    expect(screen.queryByTestId("account-switch-warning")).toBeNull();
  });

  it("says why before a switch the agent cannot follow, and goes ahead only when confirmed", async () => {
    const { sent, accounts } = fake();
    await accounts.refresh();
    render(AccountLimitNotice, { accounts, sessionKey: "claude:s1", agent: "claude", account: "acct-1", hit: spent, busy: false });
    await fireEvent.change(screen.getByTestId("limit-switch-account"), { target: { value: "acct-4" } });
    await fireEvent.click(screen.getByTestId("limit-switch"));
    await waitFor(() => expect(screen.getByTestId("account-switch-warning-text").textContent).toContain("bound to its provider"));
    expect(sent.filter((r) => r.type === "switchAccount")).toHaveLength(1);
    await fireEvent.click(screen.getByTestId("account-switch-confirm"));
    await waitFor(() => expect(sent.filter((r) => r.type === "switchAccount").at(-1)).toMatchObject({ account: "acct-4", resume: true, confirm: true }));
    await waitFor(() => expect(screen.queryByTestId("account-switch-warning")).toBeNull());
  });

  it("turns the session's auto-switch on and off", async () => {
    const { sent, accounts } = fake();
    render(AccountLimitNotice, { accounts, sessionKey: "claude:s1", agent: "claude", account: "acct-1", hit: spent, busy: true });
    expect((screen.getByTestId("limit-switch") as HTMLButtonElement).disabled).toBe(true);
    const box = screen.getByTestId("auto-switch") as HTMLInputElement;
    await waitFor(() => expect(sent.some((r) => r.type === "getAutoSwitch")).toBe(true));
    expect(box.checked).toBe(false);
    await fireEvent.click(box);
    await waitFor(() => expect(sent.find((r) => r.type === "setAutoSwitch")).toMatchObject({ sessionKey: "claude:s1", enabled: true }));
    await waitFor(() => expect(accounts.autoSwitch["claude:s1"]).toBe(true));
  });
});

describe("the composer's account switch", () => {
  it("checks a switch first; one the agent cannot follow waits for confirmation, and Keep changes nothing", async () => {
    const { sent, accounts } = fake();
    expect(await accounts.checkSwitch("claude:s1", "acct-3")).toBe(true);
    expect(await accounts.checkSwitch("claude:s1", "acct-4")).toBe(false);
    let switched = false;
    render(AccountSwitchWarning, { accounts, sessionKey: "claude:s1", resume: false, onswitched: () => (switched = true) });
    expect(screen.getByTestId("account-switch-warning-text").textContent).toBe("needs a handover");
    await fireEvent.click(screen.getByTestId("account-switch-cancel"));
    expect(screen.queryByTestId("account-switch-warning")).toBeNull();
    expect(sent.some((r) => r.type === "switchAccount")).toBe(false);
    await accounts.checkSwitch("claude:s1", "acct-4");
    await waitFor(() => expect(screen.getByTestId("account-switch-confirm")).toBeTruthy());
    await fireEvent.click(screen.getByTestId("account-switch-confirm"));
    await waitFor(() => expect(switched).toBe(true));
    expect(sent.find((r) => r.type === "switchAccount")).toMatchObject({ account: "acct-4", resume: false, confirm: true });
  });
});
