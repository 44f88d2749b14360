import { describe, expect, it } from "vitest";
import { render } from "@testing-library/svelte";
import type { ToolKind } from "../../generated";
import Icon, { icons } from "./Icon.svelte";

// Every name callers used with the hand-drawn icons; none may fall back to `other`.
const names = [
  "read", "write", "edit", "shell", "search", "fetch", "plan", "task", "mcp", "other", "chevron", "stop", "send", "plus",
  "folder", "sun", "moon", "log", "bot", "check", "x", "dot", "alert", "copy", "up", "down", "retry", "pencil", "external", "pin", "archive", "download",
];
const kinds: ToolKind[] = ["read", "write", "edit", "shell", "search", "fetch", "plan", "task", "mcp", "other"];

const svg = (props: { name: string; size?: number; label?: string }) => {
  const { container } = render(Icon, props);
  const el = container.querySelector("svg");
  if (!el) throw new Error("no svg");
  return el;
};

describe("Icon", () => {
  it("draws every name it had, and every tool kind, with a Lucide icon of its own", () => {
    expect(Object.keys(icons).sort()).toEqual([...names].sort());
    for (const kind of kinds) expect(names).toContain(kind);
    const drawn = names.map((name) => {
      const el = svg({ name });
      expect(el.querySelector("path, circle, rect, line, polyline")).not.toBeNull();
      return [...el.classList].find((c) => c.startsWith("lucide-") && c !== "lucide-icon");
    });
    expect(new Set(drawn).size).toBe(names.length);
  });

  it("is decorative by default, sized as asked, with the class the stylesheet aligns", () => {
    const el = svg({ name: "send", size: 13 });
    expect(el.getAttribute("aria-hidden")).toBe("true");
    expect(el.getAttribute("role")).toBeNull();
    expect(el.getAttribute("width")).toBe("13");
    expect(el.getAttribute("height")).toBe("13");
    expect(el.getAttribute("viewBox")).toBe("0 0 24 24");
    expect(el.getAttribute("stroke")).toBe("currentColor");
    expect(el.classList.contains("icon")).toBe(true);
    expect(svg({ name: "send" }).getAttribute("width")).toBe("16");
  });

  it("is an image named by its label when given one", () => {
    const el = svg({ name: "alert", label: "Failed" });
    expect(el.getAttribute("role")).toBe("img");
    expect(el.getAttribute("aria-label")).toBe("Failed");
    expect(el.getAttribute("aria-hidden")).toBeNull();
  });

  it("draws an unknown name as `other`", () => {
    expect(svg({ name: "no-such-icon" }).classList.contains("lucide-wrench")).toBe(true);
    expect(svg({ name: "toString" }).classList.contains("lucide-wrench")).toBe(true);
  });
});
