import { describe, expect, it } from "vitest";
import type { ClientRequest, DaemonStatus } from "../../generated";
import { browserShell, takeFragment } from "./browser";

function memoryStorage() {
  const items = new Map<string, string>();
  return { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v), items };
}

describe("takeFragment", () => {
  it("reads the token and workspace, takes the fragment out of the address bar and keeps the token for a reload", () => {
    const replaced: string[] = [];
    const history = { replaceState: (_s: unknown, _t: string, url?: string | URL | null) => void replaced.push(String(url)) };
    const session = memoryStorage();
    const start = takeFragment({ hash: "#token=abc%2B1&workspace=%2Fhome%2Fme%2Fproj", pathname: "/", search: "?x=1" }, history, session);
    expect(start).toEqual({ token: "abc+1", workspace: "/home/me/proj" });
    expect(replaced).toEqual(["/?x=1"]);
    // The reload: no fragment any more.
    const again = takeFragment({ hash: "", pathname: "/", search: "" }, history, session);
    expect(again).toEqual({ token: "abc+1", workspace: null });
    expect(replaced).toHaveLength(1);
  });

  it("leaves a place's address alone on a reload (the token comes from the tab's storage)", () => {
    const replaced: string[] = [];
    const session = memoryStorage();
    session.setItem("weft.token", "abc");
    const start = takeFragment({ hash: "#/library?q=token%3Dx", pathname: "/", search: "" }, { replaceState: (_s, _t, u) => void replaced.push(String(u)) }, session);
    expect(start).toEqual({ token: "abc", workspace: null });
    expect(replaced).toEqual([]);
  });

  it("keeps a pairing link's token and fingerprint for the device (the page added to the home screen opens without one)", () => {
    const session = memoryStorage();
    const device = memoryStorage();
    const start = takeFragment({ hash: "#token=t1&fp=AAAA%3D", pathname: "/", search: "" }, { replaceState: () => {} }, session, device);
    expect(start.token).toBe("t1");
    expect(device.getItem("weft.pin")).toBe("AAAA=");
    // Opened from the home screen: a new tab, no fragment.
    const later = takeFragment({ hash: "", pathname: "/", search: "" }, { replaceState: () => {} }, memoryStorage(), device);
    expect(later.token).toBe("t1");
    // A plain link (no fingerprint: `weft serve`'s own) is kept for the tab only.
    const plain = memoryStorage();
    takeFragment({ hash: "#token=t2", pathname: "/", search: "" }, { replaceState: () => {} }, memoryStorage(), plain);
    expect(plain.items.size).toBe(0);
  });

  it("has no token when none was given", () => {
    const start = takeFragment({ hash: "#workspace=", pathname: "/", search: "" }, { replaceState: () => {} }, memoryStorage());
    expect(start).toEqual({ token: null, workspace: null });
  });
});

describe("browserShell", () => {
  it("learns about the app from the daemon's status and keeps recent workspaces in storage", async () => {
    const storage = memoryStorage();
    const shell = browserShell({ token: "t", workspace: "/w/a" }, storage);
    const asked: ClientRequest[] = [];
    const status: DaemonStatus = {
      pid: 1, version: "0.1.0", home: "/home/me/.weft", socket: "/s", startedAt: 0, listening: [], clients: {},
      busySessions: 0, terminals: 0, pending: 0, idleSecs: 600, sandbox: null, warm: [], surfaces: [],
    };
    const info = await shell.appInfo(async <T,>(r: ClientRequest) => {
      asked.push(r);
      return status as T;
    });
    expect(asked).toEqual([{ type: "daemonStatus" }]);
    expect(info).toEqual({ version: "0.1.0", stateDir: "/home/me/.weft", logPath: null, initialWorkspace: "/w/a" });
    expect(shell.pickWorkspace).toBeUndefined();
    expect(shell.openLog).toBeUndefined();
    expect(await shell.recentWorkspaces()).toEqual([]);
    await shell.addRecentWorkspace("/w/a");
    await shell.addRecentWorkspace("/w/b");
    expect(await shell.addRecentWorkspace("/w/a")).toEqual(["/w/a", "/w/b"]);
    expect(await shell.removeRecentWorkspace("/w/a")).toEqual(["/w/b"]);
    await shell.addRecentWorkspace("/w/a");
    expect(await browserShell({ token: null, workspace: null }, storage).recentWorkspaces()).toEqual(["/w/a", "/w/b"]);
    storage.setItem("weft.recentWorkspaces", "{broken");
    expect(await shell.recentWorkspaces()).toEqual([]);
  });
});
