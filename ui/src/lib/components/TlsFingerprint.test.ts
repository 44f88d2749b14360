import { render, screen, waitFor } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import TlsFingerprint from "./TlsFingerprint.svelte";

function memory(init: Record<string, string> = {}) {
  const map = new Map(Object.entries(init));
  return { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v) };
}

describe("TlsFingerprint", () => {
  it("shows the served key fingerprint over TLS", async () => {
    render(TlsFingerprint, { load: async () => "AAAA=", storage: memory(), secure: true });
    await waitFor(() => expect(screen.getByTestId("tls-fingerprint-value").textContent).toBe("AAAA="));
    expect(screen.getByTestId("tls-fingerprint").getAttribute("role")).toBe("status");
  });

  it("warns when the server's key is not the paired one", async () => {
    render(TlsFingerprint, { load: async () => "BBBB=", storage: memory({ "weft.pin": "AAAA=" }), secure: true });
    await waitFor(() => expect(screen.getByTestId("tls-fingerprint").getAttribute("role")).toBe("alert"));
    expect(screen.getByTestId("tls-fingerprint").textContent).toContain("not the one you paired with");
  });

  it("shows nothing without TLS", async () => {
    let asked = false;
    render(TlsFingerprint, { load: async () => ((asked = true), "AAAA="), storage: memory(), secure: false });
    await Promise.resolve();
    expect(asked).toBe(false);
    expect(screen.queryByTestId("tls-fingerprint")).toBeNull();
  });
});
