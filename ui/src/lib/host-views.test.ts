import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import type { ClientRequest, UsageRow } from "../generated";
import { AccountsStore } from "./accounts.svelte";
import { ALL_HOSTS, HostViews, onHost, sumUsage } from "./host-views.svelte";
import { LibraryStore } from "./library.svelte";
import { fake, session } from "./test-support/library";
import type { Transport } from "./transport";
import HostPicker from "./components/HostPicker.svelte";
import UsagePage from "./components/UsagePage.svelte";

const row = (r: Partial<UsageRow>): UsageRow => ({
  key: "2026-12-01", calls: 1, inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0,
  costUsd: 1, unpricedModels: [], costByModel: [], cacheHitRate: 0, ...r,
});

/** This machine's daemon (the library fake) and a host `gpu` reached through the shell's `requestOn`. */
function withHost() {
  const { sent, transport } = fake();
  const onGpu: ClientRequest[] = [];
  const t = transport as Transport;
  t.listHosts = async () => [{ name: "gpu", destination: "me@gpu", home: "/home/me", connected: true, error: null }];
  t.requestOn = (async (host: string, r: ClientRequest) => {
    if (host !== "gpu") throw { code: "badRequest", message: `no host ${host}` };
    onGpu.push(r);
    switch (r.type) {
      case "listLibrary":
        // The shell names the host's sessions back (`gpu/…`).
        return [session({ sessionKey: "gpu/claude:g1", title: "train the model", workdir: "gpu:/srv/ml" })];
      case "usage":
        if (r.by === "block") return [];
        return [row({ key: "2026-11-30", calls: 5, inputTokens: 100, outputTokens: 50, costUsd: 2.5 }), row({ key: "2026-12-01", calls: 2, costUsd: 0.5 })];
      case "listAccounts":
        return [];
      default:
        throw { code: "badRequest", message: `unexpected ${r.type}` };
    }
  }) as Transport["requestOn"];
  return { sent, onGpu, transport: t };
}

describe("the library, usage, agents and accounts of each host", () => {
  it("sends a host's verbs to that host through the shell, and this machine's as before", async () => {
    const { sent, onGpu, transport } = withHost();
    expect(onHost(transport, "local")).toBe(transport);
    await onHost(transport, "gpu").request({ type: "libraryProgress" }).catch(() => {});
    expect(onGpu.map((r) => r.type)).toEqual(["libraryProgress"]);
    expect(sent).toEqual([]);

    const views = new HostViews(transport, { library: new LibraryStore(transport), accounts: new AccountsStore(transport) });
    expect(views.names).toEqual(["local"]);
    await views.refresh();
    expect(views.names).toEqual(["local", "gpu"]);
    const gpu = views.library("gpu");
    expect(views.library("gpu")).toBe(gpu);
    await gpu.refresh();
    expect(gpu.sessions.map((s) => s.sessionKey)).toEqual(["gpu/claude:g1"]);
    expect(sent.filter((r) => r.type === "listLibrary")).toEqual([]);
    await views.accounts("gpu").refresh();
    expect(onGpu.map((r) => r.type)).toContain("listAccounts");
  });

  it("offers no host to pick without a list (a browser, or no hosts)", async () => {
    const { transport } = fake();
    const views = new HostViews(transport, { library: new LibraryStore(transport), accounts: new AccountsStore(transport) });
    await views.refresh();
    expect(views.picking).toBe(false);
    render(HostPicker, { hosts: views.names, value: "local", onpick: () => {}, what: "library" });
    expect(screen.queryByTestId("host-pick")).toBeNull();
  });

  it("sums usage of every host by its key, a cost unknown only where every host's is", () => {
    const summed = sumUsage([
      [row({ key: "d1", calls: 1, inputTokens: 10, cacheReadTokens: 10, costUsd: null, unpricedModels: ["m"], costByModel: [] })],
      [row({ key: "d1", calls: 2, inputTokens: 30, cacheReadTokens: 0, costUsd: 1.5, costByModel: [{ model: "x", costUsd: 1.5 }] }), row({ key: "d2", costUsd: null })],
    ]);
    expect(summed.map((r) => [r.key, r.calls, r.inputTokens, r.costUsd, r.unpricedModels, r.cacheHitRate])).toEqual([
      ["d1", 3, 40, 1.5, ["m"], 0.2],
      ["d2", 1, 10, null, [], 0],
    ]);
    expect(summed[0].costByModel).toEqual([{ model: "x", costUsd: 1.5 }]);
  });

  it("shows usage of every host summed, with a line per host, and of one host picked", async () => {
    const { transport } = withHost();
    const views = new HostViews(transport, { library: new LibraryStore(transport), accounts: new AccountsStore(transport) });
    await views.refresh();
    let picked = "";
    const pick = render(HostPicker, { hosts: views.names, value: "local", onpick: (h: string) => (picked = h), what: "usage", all: true });
    const select = within(pick.container).getByTestId("host-pick") as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toEqual([ALL_HOSTS, "local", "gpu"]);
    await fireEvent.change(select, { target: { value: ALL_HOSTS } });
    expect(picked).toBe(ALL_HOSTS);
    pick.unmount();

    render(UsagePage, { library: views.usage(ALL_HOSTS) });
    // This machine's day (3 calls, cost unknown) and gpu's two days, summed by day.
    await waitFor(() => expect(screen.getAllByTestId("usage-row")).toHaveLength(2));
    const days = screen.getAllByTestId("usage-row").map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(days[0].slice(0, 2)).toEqual(["2026-11-30", "8"]);
    expect(days[0].at(-1)).toBe("$2.50");
    expect(days[1].slice(0, 2)).toEqual(["2026-12-01", "2"]);
    const hosts = screen.getAllByTestId("usage-host-row").map((r) => [r.dataset.host, r.querySelectorAll("td")[1].textContent]);
    expect(hosts).toEqual([
      ["local", "3"],
      ["gpu", "7"],
    ]);
  });

  it("shows one host's usage alone when it is picked", async () => {
    const { transport, onGpu } = withHost();
    const views = new HostViews(transport, { library: new LibraryStore(transport), accounts: new AccountsStore(transport) });
    await views.refresh();
    render(UsagePage, { library: views.usage("gpu") });
    await waitFor(() => expect(screen.getAllByTestId("usage-row")).toHaveLength(2));
    expect(screen.queryByTestId("usage-by-host")).toBeNull();
    expect(onGpu.some((r) => r.type === "usage")).toBe(true);
  });
});
