import { describe, expect, it } from "vitest";
import { snippetParts } from "./snippet";

describe("snippetParts", () => {
  it("splits a snippet into text and marked terms", () => {
    expect(snippetParts("the «zebra» crossing «cross»es")).toEqual([
      { text: "the ", mark: false },
      { text: "zebra", mark: true },
      { text: " crossing ", mark: false },
      { text: "cross", mark: true },
      { text: "es", mark: false },
    ]);
  });

  it("keeps markup as text and an unclosed mark as plain text", () => {
    expect(snippetParts("<img src=x onerror=alert(1)> «a")).toEqual([{ text: "<img src=x onerror=alert(1)> «a", mark: false }]);
    expect(snippetParts("line\nbreak")).toEqual([{ text: "line break", mark: false }]);
    expect(snippetParts("")).toEqual([]);
  });
});
