import { describe, expect, it } from "vitest";
import { formatAddress, parseAddress, type Address } from "./places";

describe("addresses", () => {
  const round: [string, Address][] = [
    ["#/new", { place: { view: "session" }, session: null }],
    ["#/s/claude%3Aab%2F1", { place: { view: "session" }, session: "claude:ab/1", beside: null }],
    ["#/s/a%3A1?with=b%3A2", { place: { view: "session" }, session: "a:1", beside: "b:2" }],
    ["#/inbox", { place: { view: "inbox" } }],
    ["#/library", { place: { view: "library", q: "" } }],
    ["#/library?q=flaky%20test", { place: { view: "library", q: "flaky test" } }],
    ["#/review", { place: { view: "review" } }],
    ["#/review?fanout=3fa9c1", { place: { view: "review", fanout: "3fa9c1" } }],
    ["#/usage", { place: { view: "usage" } }],
    ["#/settings/appearance", { place: { view: "settings", tab: "appearance" } }],
  ];
  it.each(round)("%s reads back to what it was made from", (hash, address) => {
    expect(parseAddress(hash)).toEqual(address);
    expect(formatAddress(address)).toBe(hash);
  });

  it("reads the short forms", () => {
    expect(parseAddress("#/")).toEqual({ place: { view: "session" }, session: null });
    expect(parseAddress("#/settings")).toEqual({ place: { view: "settings", tab: "accounts" } });
  });

  it("refuses what is not an address: a token fragment, unknown places and tabs, bad escapes", () => {
    for (const bad of ["", "#token=abc&workspace=/x", "#/nowhere", "#/settings/root", "#/s/", "#/s/a/b", "#/s/%E0%A4%A", "#/inbox/1"]) {
      expect(parseAddress(bad), bad).toBeNull();
    }
  });
});
