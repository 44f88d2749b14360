import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { ClientRequest, SurfaceCommandRequest } from "../../generated";
import type { Requester } from "../transport";
import ChatSettings from "./ChatSettings.svelte";

/** A daemon whose `weft-matrix` keeps its state in memory, as the real one does on disk. */
function daemon() {
  const state = { user: null as string | null, homeserver: null as string | null, allowed: [] as string[] };
  const commands: SurfaceCommandRequest[] = [];
  const request = (async (r: ClientRequest) => {
    if (r.type === "daemonStatus") {
      return { surfaces: [{ name: "matrix", running: state.user !== null, pid: 7, restarts: 0, lastError: null, since: 1 }] };
    }
    if (r.type !== "surfaceCommand") throw { code: "badRequest", message: `unexpected ${r.type}` };
    commands.push(r);
    const [verb, ...rest] = r.args;
    const ok = (stdout = "") => ({ code: 0, stdout, stderr: "" });
    switch (verb) {
      case "status":
        return ok(
          JSON.stringify({ homeserver: state.homeserver, user: state.user, deviceId: state.user && "DEV", verified: true, allowed: state.allowed, rooms: [] }),
        );
      case "login":
        if (r.stdin !== "right") return { code: 1, stdout: "", stderr: "weft-matrix: M_FORBIDDEN: Invalid username or password\n" };
        state.homeserver = rest[1];
        state.user = rest[3];
        return ok();
      case "allow":
        state.allowed.push(rest[0]);
        return ok();
      case "deny":
        state.allowed = state.allowed.filter((a) => a !== rest[0]);
        return ok();
      case "logout":
        state.user = null;
        return ok();
    }
    throw { code: "badRequest", message: verb };
  }) as Requester;
  return { request, commands, state };
}

async function logIn(password: string) {
  await fireEvent.input(screen.getByTestId("chat-homeserver"), { target: { value: "http://127.0.0.1:8008" } });
  await fireEvent.input(screen.getByTestId("chat-user-input"), { target: { value: "@bot:localhost" } });
  await fireEvent.input(screen.getByTestId("chat-password"), { target: { value: password } });
  await fireEvent.submit(screen.getByTestId("chat-login"));
}

describe("ChatSettings", () => {
  it("logs the bot in with the password on stdin only, and shows the error of a wrong one", async () => {
    const d = daemon();
    render(ChatSettings, { request: d.request });
    await waitFor(() => screen.getByTestId("chat-login"));
    await logIn("wrong");
    await waitFor(() => expect(screen.getByTestId("chat-error").textContent).toBe("M_FORBIDDEN: Invalid username or password"));
    expect((screen.getByTestId("chat-password") as HTMLInputElement).value).toBe("");
    await logIn("right");
    await waitFor(() => expect(screen.getByTestId("chat-user").textContent).toBe("@bot:localhost"));
    expect(screen.getByTestId("chat-surface").textContent).toContain("running");
    const login = d.commands.filter((c) => c.args[0] === "login").pop()!;
    expect(login.args).toEqual(["login", "--homeserver", "http://127.0.0.1:8008", "--user", "@bot:localhost"]);
    expect(login.args.join(" ")).not.toContain("right");
    expect(login.stdin).toBe("right");
    expect(screen.queryByTestId("chat-error")).toBeNull();
  });

  it("keeps the allow-list and logs out", async () => {
    const d = daemon();
    d.state.user = "@bot:localhost";
    d.state.homeserver = "http://127.0.0.1:8008";
    render(ChatSettings, { request: d.request });
    await waitFor(() => screen.getByTestId("chat-allowed-empty"));
    await fireEvent.input(screen.getByTestId("chat-allow-input"), { target: { value: " @me:localhost " } });
    await fireEvent.submit(screen.getByTestId("chat-allow-input").closest("form")!);
    await waitFor(() => expect(screen.getAllByTestId("chat-allowed").map((l) => l.getAttribute("data-mxid"))).toEqual(["@me:localhost"]));
    expect(d.commands.some((c) => c.args.join(" ") === "allow @me:localhost")).toBe(true);
    await fireEvent.click(screen.getByRole("button", { name: "Deny @me:localhost" }));
    await waitFor(() => screen.getByTestId("chat-allowed-empty"));
    await fireEvent.click(screen.getByTestId("chat-logout"));
    await waitFor(() => screen.getByTestId("chat-login"));
  });

  it("says so when the window cannot reach the daemon's settings", () => {
    render(ChatSettings, { request: null });
    expect(screen.getByTestId("chat-settings").textContent).toContain("does not reach the daemon");
  });
});
