import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { AccountInfo, ClientRequest } from "../../generated";
import { AccountsStore, limitsText } from "../accounts.svelte";
import type { Transport } from "../transport";
import AccountsView from "./AccountsView.svelte";

const account = (a: Partial<AccountInfo>): AccountInfo => ({
  id: "acct-1", agent: "claude", kind: "api-key", label: "work", homeDir: null, baseUrl: null, protocol: null,
  models: [], env: {}, secret: { type: "store" }, limits: [], createdAt: 1, updatedAt: 1, ...a,
});

/** A transport that answers the account verbs from a list and records every request. */
function fake() {
  const sent: ClientRequest[] = [];
  let list: AccountInfo[] = [];
  const request = async (r: ClientRequest): Promise<unknown> => {
    sent.push(r);
    switch (r.type) {
      case "listAccounts":
        return list;
      case "addAccount": {
        const a = account({ id: `acct-${list.length + 1}`, agent: r.agent, kind: r.kind, label: r.label, baseUrl: r.baseUrl });
        list = [...list, a];
        return a;
      }
      case "testAccount":
        return { id: r.account, ok: false, status: "wrongKey", detail: "the endpoint refused its key (401)" };
      case "removeAccount":
        list = list.filter((a) => a.id !== r.account);
        return null;
      default:
        throw { code: "badRequest", message: `unexpected ${r.type}` };
    }
  };
  return { sent, transport: { request } as unknown as Transport };
}

describe("AccountsView", () => {
  it("adds an api-key account with its secret in the request only, then tests and removes it", async () => {
    const { sent, transport } = fake();
    const accounts = new AccountsStore(transport);
    render(AccountsView, { accounts, onclose: () => {} });
    await fireEvent.input(screen.getByTestId("account-label-input"), { target: { value: "work key" } });
    await fireEvent.input(screen.getByTestId("account-base-url"), { target: { value: "http://127.0.0.1:9" } });
    await fireEvent.input(screen.getByTestId("account-secret"), { target: { value: "sk-typed-secret" } });
    await fireEvent.click(screen.getByTestId("account-add-submit"));
    await waitFor(() => expect(screen.getAllByTestId("account-row")).toHaveLength(1));
    const add = sent.find((r) => r.type === "addAccount");
    expect(add).toMatchObject({ agent: "claude", kind: "api-key", label: "work key", secret: { type: "value", value: "sk-typed-secret" } });
    expect((screen.getByTestId("account-secret") as HTMLInputElement).value).toBe("");
    expect(document.body.textContent).not.toContain("sk-typed-secret");

    await fireEvent.click(screen.getByTestId("account-test"));
    await waitFor(() => expect(screen.getByTestId("account-test-result").textContent).toContain("wrongKey"));

    await fireEvent.click(screen.getByTestId("account-remove"));
    await fireEvent.click(screen.getByTestId("account-remove-confirm"));
    await waitFor(() => expect(screen.queryAllByTestId("account-row")).toHaveLength(0));
  });

  it("says each limit window's use and when it resets", () => {
    const a = account({
      limits: [{ window: "five_hour", status: "allowed_warning", usedPercent: 91.6, resetsAt: 10_000 + 2 * 3_600_000, seenAt: 1 }],
    });
    expect(limitsText(a, 10_000)).toBe("five_hour 92% (allowed_warning) · resets in 2h");
  });
});
