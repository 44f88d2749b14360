import { describe, expect, it } from "vitest";
import type { Question } from "../generated";
import { questionAnswer, questionsComplete, togglePick } from "./question-answer";

const q = (id: string, choices: string[], extra: Partial<Question> = {}): Question => ({
  id,
  text: `${id}?`,
  type: choices.length ? "select" : "text",
  choices: choices.map((c) => ({ label: c, value: c })),
  ...extra,
});

describe("questionAnswer", () => {
  it("keeps one pick of one question as the single value", () => {
    expect(questionAnswer([q("color", ["Red", "Blue"])], { color: "Blue" }, {}, {})).toEqual({
      action: "select",
      value: "Blue",
      answers: {},
    });
  });

  it("sends several picks in the choices' order and Other text beside them", () => {
    const qs = [q("top", ["Cheese", "Olives", "Basil"], { multiple: true, freeText: true })];
    const a = questionAnswer(qs, { top: "" }, { top: ["Basil", "Cheese"] }, { top: " Anchovies " });
    expect(a).toEqual({
      action: "select",
      value: null,
      answers: {},
      selected: { top: ["Cheese", "Basil"] },
      texts: { top: "Anchovies" },
    });
  });

  it("answers several questions by id, Other text alone counting as an answer", () => {
    const qs = [q("color", ["Red", "Blue"], { freeText: true }), q("size", ["S", "L"], { freeText: true }), q("name", [])];
    const answers = { color: "Red", size: "", name: "Otter" };
    const others = { color: "", size: "Family", name: "" };
    expect(questionsComplete(qs, answers, {}, others)).toBe(true);
    expect(questionAnswer(qs, answers, {}, others)).toEqual({
      action: "select",
      value: null,
      answers: { color: "Red", name: "Otter" },
      texts: { size: "Family" },
    });
  });

  it("is incomplete until each question has something", () => {
    const qs = [q("top", ["Cheese"], { multiple: true }), q("name", [])];
    expect(questionsComplete(qs, { name: "x" }, { top: [] }, {})).toBe(false);
    expect(questionsComplete(qs, { name: "x" }, { top: ["Cheese"] }, {})).toBe(true);
  });

  it("toggles a pick", () => {
    expect(togglePick(["a"], "b")).toEqual(["a", "b"]);
    expect(togglePick(["a", "b"], "a")).toEqual(["b"]);
  });
});
