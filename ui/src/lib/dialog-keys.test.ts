import { describe, expect, it } from "vitest";
import { dialogKey, trapTab } from "./dialog-keys";

describe("dialogKey", () => {
  it("Enter answers with the primary choice, Esc cancels, 1–9 pick the n-th choice", () => {
    expect(dialogKey({ key: "Enter" }, "user-input", false, 3)).toEqual({ type: "primary" });
    expect(dialogKey({ key: "Escape" }, "permission", true, 3)).toEqual({ type: "cancel" });
    expect(dialogKey({ key: "2" }, "user-input", false, 3)).toEqual({ type: "choose", index: 1 });
    expect(dialogKey({ key: "4" }, "user-input", false, 3)).toBeNull();
    expect(dialogKey({ key: "0" }, "user-input", false, 3)).toBeNull();
  });

  it("a / s / d decide a permission; not elsewhere, not with modifiers", () => {
    expect(dialogKey({ key: "a" }, "permission", false, 3)).toEqual({ type: "decide", value: "allow" });
    expect(dialogKey({ key: "S" }, "permission", false, 3)).toEqual({ type: "decide", value: "allowSession" });
    expect(dialogKey({ key: "d" }, "permission", false, 3)).toEqual({ type: "decide", value: "deny" });
    expect(dialogKey({ key: "a" }, "user-input", false, 3)).toBeNull();
    expect(dialogKey({ key: "a", ctrlKey: true }, "permission", false, 3)).toBeNull();
  });

  it("keys typed into a text answer stay text; Ctrl+Enter answers, Shift+Enter is a new line", () => {
    expect(dialogKey({ key: "1" }, "user-input", true, 3)).toBeNull();
    expect(dialogKey({ key: "Enter" }, "user-input", true, 0)).toBeNull();
    expect(dialogKey({ key: "Enter", ctrlKey: true }, "user-input", true, 0)).toEqual({ type: "primary" });
    expect(dialogKey({ key: "Enter", shiftKey: true }, "user-input", false, 0)).toBeNull();
    expect(dialogKey({ key: "Enter", isComposing: true }, "user-input", false, 0)).toBeNull();
  });
});

describe("trapTab", () => {
  it("wraps Tab from the last control to the first and Shift+Tab from the first to the last", () => {
    const root = document.createElement("div");
    root.innerHTML = '<button id="a">a</button><button id="b" disabled>b</button><button id="c">c</button>';
    const [a, , c] = [...root.querySelectorAll("button")];
    expect(trapTab(root, c, false)).toBe(a);
    expect(trapTab(root, a, true)).toBe(c);
    expect(trapTab(root, a, false)).toBeNull();
    expect(trapTab(root, root, false)).toBe(a);
  });
});
