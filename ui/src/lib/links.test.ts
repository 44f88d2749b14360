import { describe, expect, it } from "vitest";
import { classifyHref, toolFilePath } from "./links";

describe("classifyHref", () => {
  it("sends only http, https and mailto to the browser", () => {
    expect(classifyHref("https://example.com/a?b=1")).toEqual({ kind: "url", url: "https://example.com/a?b=1" });
    expect(classifyHref("HTTP://x.org")).toEqual({ kind: "url", url: "HTTP://x.org" });
    expect(classifyHref("mailto:me@example.com")).toEqual({ kind: "url", url: "mailto:me@example.com" });
    expect(classifyHref("tel:+123")).toEqual({ kind: "refused", href: "tel:+123" });
    expect(classifyHref("vscode://file/x")).toEqual({ kind: "refused", href: "vscode://file/x" });
    expect(classifyHref("javascript:alert(1)")).toEqual({ kind: "refused", href: "javascript:alert(1)" });
  });

  it("treats file URLs and relative paths as files, and leaves in-page anchors alone", () => {
    expect(classifyHref("file:///home/me/a%20b.md")).toEqual({ kind: "file", path: "/home/me/a b.md" });
    expect(classifyHref("src/main.rs")).toEqual({ kind: "file", path: "src/main.rs" });
    expect(classifyHref("./docs/x.md#part")).toEqual({ kind: "file", path: "./docs/x.md" });
    expect(classifyHref("#section")).toBeNull();
    expect(classifyHref("")).toBeNull();
    expect(classifyHref(null)).toBeNull();
  });
});

describe("toolFilePath", () => {
  it("finds the file a tool call works on", () => {
    expect(toolFilePath({ file_path: "/w/a.rs", content: "x" })).toBe("/w/a.rs");
    expect(toolFilePath({ path: "src/b.rs" })).toBe("src/b.rs");
    expect(toolFilePath({ command: "ls" })).toBeNull();
    expect(toolFilePath("nope")).toBeNull();
    expect(toolFilePath({ path: "a\nb" })).toBeNull();
  });
});
