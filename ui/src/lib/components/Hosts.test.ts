import { beforeEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";
import Sidebar from "./Sidebar.svelte";
import Composer from "./Composer.svelte";
import HostsPanel from "./HostsPanel.svelte";
import InboxView from "./InboxView.svelte";

async function started(t: FakeTransport) {
  const app = new AppStore(t);
  await app.start();
  return app;
}

describe("one window over all hosts", () => {
  beforeEach(() => localStorage.clear());

  it("lists every host's sessions in the sidebar under a head per host, each badged with its host", async () => {
    const t = new FakeTransport();
    t.addSession("echo", "/work/demo", "here");
    const remote = t.addSession("echo", "gpu:/home/me/proj", "over there", "gpu");
    const app = await started(t);
    render(Sidebar, { app });
    await waitFor(() => expect(screen.getAllByTestId("session-item").length).toBe(2));
    expect(screen.getAllByTestId("host-head").map((h) => h.dataset.host)).toEqual(["local", "gpu"]);
    const item = screen.getAllByTestId("session-item").find((el) => el.dataset.sessionKey === remote)!;
    expect(within(item).getByTestId("session-host").textContent).toBe("gpu");
    const local = screen.getAllByTestId("session-item").find((el) => el.dataset.sessionKey !== remote)!;
    expect(within(local).queryByTestId("session-host")).toBeNull();
    const ws = screen.getAllByTestId("workspace").find((w) => w.dataset.workdir === "gpu:/home/me/proj")!;
    expect(within(ws).getByTestId("workspace-item").textContent).toContain("proj");
    expect(within(ws).getByTestId("workspace-host").textContent).toBe("gpu");
    // Selecting it opens the session by its host's key: its verbs go there.
    await fireEvent.click(within(item).getByRole("button"));
    expect(app.selectedKey).toBe(remote);
  });

  it("groups a host's sessions under their worktrees (named gpu:/… by the shell) with branch, ahead/behind and dirty", async () => {
    const t = new FakeTransport();
    const repo = "gpu:/srv/repo";
    const path = "gpu:/srv/repo/.weft/worktrees/a";
    const key = t.addSession("echo", path, "in a worktree", "gpu");
    t.sessions.get(key)!.info.worktree = { name: "a", path, branch: "weft/a", base: "main" };
    t.addSession("echo", repo, "at the repository", "gpu");
    t.worktrees = [{ name: "a", repo, path, branch: "weft/a", base: "main", ahead: 2, behind: 1, dirty: true, ports: "40000-40009", sessions: [key] }];
    const app = await started(t);
    render(Sidebar, { app });
    await app.worktrees.refresh(app.sessions, true);
    const head = await screen.findByTestId("worktree");
    expect(head.dataset.path).toBe(path);
    expect(within(head).getByTestId("worktree-branch").textContent).toBe("weft/a");
    expect(within(head).getByTestId("worktree-ahead").textContent).toBe("↑2");
    expect(within(head).getByTestId("worktree-behind").textContent).toBe("↓1");
    expect(within(head).getByTestId("worktree-dirty")).toBeTruthy();
    // Under the host's repository, not a workspace of its own.
    const workspaces = screen.queryAllByTestId("workspace").map((w) => w.dataset.workdir);
    expect(workspaces).toContain(repo);
    expect(workspaces).not.toContain(path);
    const item = screen.getAllByTestId("session-item").find((el) => el.dataset.sessionKey === key)!;
    expect(item.classList.contains("nested")).toBe(true);
    expect(within(item).getByTestId("session-host").textContent).toBe("gpu");
    // Its dev server (the first of its ports) opens here, forwarded through the host's ssh.
    const opened: string[] = [];
    t.openUrl = async (url: string) => void opened.push(url);
    await fireEvent.click(within(head).getByTestId("worktree-forward"));
    await waitFor(() => expect(opened).toEqual(["http://127.0.0.1:40000/"]));
    expect(t.forwards).toEqual([{ host: "gpu", port: 40000, local: 40000, listening: true }]);
    // Forwarded already: opened again without a second forward.
    await fireEvent.click(within(head).getByTestId("worktree-forward"));
    await waitFor(() => expect(opened.length).toBe(2));
    expect(t.calls.filter((c) => c.verb === "forwardHostPort").length).toBe(1);
  });

  it("shows a host's questions in the one inbox with the agent read from its key", async () => {
    const t = new FakeTransport();
    const app = await started(t);
    app.inbox = [
      { promptId: "p1", sessionKey: "gpu/claude:s9", kind: "user-input", title: "Which branch?", detail: null, toolName: null, questions: [], createdAt: Date.now(), expiresAt: null },
    ];
    render(InboxView, { app });
    const card = await screen.findByTestId("inbox-item");
    expect(card.dataset.sessionKey).toBe("gpu/claude:s9");
    expect(card.querySelector(".card-foot")?.textContent).toContain("claude on gpu ·");
    expect(within(card).getByTestId("inbox-host").textContent).toBe("gpu");
  });

  it("the composer's folder browser lists the chosen host's folders by listDir and opens one as that host's workspace", async () => {
    const t = new FakeTransport();
    t.hostList = [{ name: "gpu", destination: "me@gpu.example", home: "/home/me", connected: true, error: null }];
    t.folders = {
      "/home/me": ["here-only/"],
      "gpu:/home/me": [".cache/", "proj/.git", "notes/", "readme.txt"],
      "gpu:/home/me/proj": ["src/"],
    };
    const app = await started(t);
    render(Composer, { app });
    await fireEvent.click(screen.getByTestId("browse-folders"));
    const browser = await screen.findByTestId("folder-browser");
    await waitFor(() => expect(browser.dataset.path).toBe("/home/me"));
    expect(screen.getAllByTestId("folder-entry").map((e) => e.dataset.name)).toEqual(["here-only"]);
    // The host picker: local and every host of the list.
    const pick = screen.getByTestId("folder-host") as HTMLSelectElement;
    expect([...pick.options].map((o) => o.value)).toEqual(["local", "gpu"]);
    await fireEvent.change(pick, { target: { value: "gpu" } });
    await waitFor(() => expect(screen.getAllByTestId("folder-entry").map((e) => e.dataset.name)).toEqual(["proj", "notes"]));
    // Asked of the host, by its folder name (the shell routes `gpu:/…` to gpu's daemon).
    expect(t.calls.filter((c) => c.verb === "listDir").map((c) => c.args[0])).toEqual([null, "gpu:/home/me"]);
    const proj = screen.getAllByTestId("folder-entry").find((e) => e.dataset.name === "proj")!;
    expect(proj.dataset.repo).toBe("true");
    await fireEvent.click(proj);
    await waitFor(() => expect(screen.getByTestId("folder-browser").dataset.path).toBe("/home/me/proj"));
    await fireEvent.click(screen.getByTestId("folder-choose"));
    await waitFor(() => expect(app.workspace).toBe("gpu:/home/me/proj"));
    expect(screen.queryByTestId("folder-browser")).toBeNull();
    expect(t.recents[0]).toBe("gpu:/home/me/proj");
    // A new session there is prompted with the host's folder: the shell sends it to gpu.
    await app.send("hello over there");
    const prompt = t.calls.find((c) => c.verb === "prompt")?.args[0] as { workdir?: string };
    expect(prompt.workdir).toBe("gpu:/home/me/proj");
  });

  it("a folder the host refuses says why in the browser", async () => {
    const t = new FakeTransport();
    t.hostList = [{ name: "gpu", destination: "me@gpu.example", home: "/nowhere", connected: true, error: null }];
    const app = await started(t);
    render(Composer, { app });
    await fireEvent.click(screen.getByTestId("browse-folders"));
    await fireEvent.change(await screen.findByTestId("folder-host"), { target: { value: "gpu" } });
    expect((await screen.findByTestId("folder-error")).textContent).toContain("No such file");
  });

  it("Settings → Hosts adds a host by name and destination, shows its status and removes it", async () => {
    const t = new FakeTransport();
    render(HostsPanel, { transport: t, version: "0.1.0" });
    await fireEvent.input(screen.getByTestId("host-name"), { target: { value: "gpu" } });
    await fireEvent.input(screen.getByTestId("host-destination"), { target: { value: "me@gpu.example" } });
    await fireEvent.click(screen.getByTestId("host-add"));
    await waitFor(() => expect(screen.getAllByTestId("host-row").map((r) => r.dataset.host)).toEqual(["local", "gpu"]));
    expect(t.calls.find((c) => c.verb === "addHost")?.args).toEqual(["gpu", "me@gpu.example"]);
    const row = screen.getAllByTestId("host-row")[1];
    expect(within(row).getByTestId("host-link").textContent).toBe("connected");
    await fireEvent.click(screen.getByTestId("host-status-refresh"));
    await waitFor(() => expect(within(row).getByTestId("host-status").textContent).toContain("Weft 0.1.0"));
    // The same name again: the shell's refusal is shown.
    await fireEvent.input(screen.getByTestId("host-name"), { target: { value: "gpu" } });
    await fireEvent.input(screen.getByTestId("host-destination"), { target: { value: "x@y" } });
    await fireEvent.click(screen.getByTestId("host-add"));
    expect((await screen.findByTestId("hosts-error")).textContent).toContain("already there");
    await fireEvent.click(within(row).getByTestId("host-remove"));
    await waitFor(() => expect(screen.getAllByTestId("host-row").map((r) => r.dataset.host)).toEqual(["local"]));
  });

  it("where the surface has no hosts commands (a browser), the panel says where hosts are added", async () => {
    const t = new FakeTransport();
    delete (t as { listHosts?: unknown }).listHosts;
    render(HostsPanel, { transport: t, version: "0.1.0" });
    expect(screen.getByTestId("hosts-unavailable")).toBeTruthy();
  });

  it("forwards a host's port here from Settings → Hosts, opens it, and stops it", async () => {
    const t = new FakeTransport();
    t.hostList = [{ name: "gpu", destination: "me@gpu.example", home: "/home/me", connected: true, error: null }];
    const opened: string[] = [];
    t.openUrl = async (url: string) => void opened.push(url);
    render(HostsPanel, { transport: t, version: "0.1.0" });
    const form = await screen.findByTestId("host-forward-form");
    await fireEvent.input(within(form).getByTestId("host-forward-port"), { target: { value: "3000:8080" } });
    await fireEvent.click(within(form).getByTestId("host-forward-add"));
    const row = await screen.findByTestId("host-forward");
    expect([row.dataset.host, row.dataset.port, row.dataset.local]).toEqual(["gpu", "3000", "8080"]);
    expect(t.calls.filter((c) => c.verb === "forwardHostPort").map((c) => c.args)).toEqual([["gpu", "3000:8080", false]]);
    await fireEvent.click(within(row).getByText("http://127.0.0.1:8080/"));
    expect(opened).toEqual(["http://127.0.0.1:8080/"]);
    await fireEvent.click(within(row).getByTestId("host-forward-cancel"));
    await waitFor(() => expect(screen.queryByTestId("host-forward")).toBeNull());
    expect(t.calls.filter((c) => c.verb === "forwardHostPort").at(-1)?.args).toEqual(["gpu", "3000", true]);
  });
});
