// The answer a question form gives, in the wire's terms: one picked value as before
// (`value`, or `answers` by question id), several picks of a question that takes
// several in `selected`, and the free "Other" text of a select question in `texts`.
import type { Question } from "../generated";

export type QuestionAnswer = {
  action: "select" | "text";
  value: string | null;
  answers: Record<string, string>;
  selected?: Record<string, string[]>;
  texts?: Record<string, string>;
};

/** `picks` with `value` added, or taken out when it was there. */
export function togglePick(picks: string[], value: string): string[] {
  return picks.includes(value) ? picks.filter((p) => p !== value) : [...picks, value];
}

const filled = (s: string | undefined) => (s ?? "").trim() !== "";

/** Whether every question has an answer: a pick, a text, or "Other" text. */
export function questionsComplete(
  questions: Question[],
  answers: Record<string, string>,
  picks: Record<string, string[]>,
  others: Record<string, string>,
): boolean {
  return questions.every((q) =>
    q.multiple ? (picks[q.id]?.length ?? 0) > 0 || filled(others[q.id]) : filled(answers[q.id]) || filled(others[q.id]),
  );
}

export function questionAnswer(
  questions: Question[],
  answers: Record<string, string>,
  picks: Record<string, string[]>,
  others: Record<string, string>,
): QuestionAnswer {
  const single: Record<string, string> = {};
  const selected: Record<string, string[]> = {};
  const texts: Record<string, string> = {};
  let picked = false;
  for (const q of questions) {
    if (q.multiple) {
      const chosen = q.choices.map((c) => c.value).filter((v) => picks[q.id]?.includes(v));
      if (chosen.length) {
        selected[q.id] = chosen;
        picked = true;
      }
    } else if (filled(answers[q.id])) {
      single[q.id] = answers[q.id];
      if (q.type === "select") picked = true;
    }
    if (q.type === "select" && q.freeText && filled(others[q.id])) texts[q.id] = others[q.id].trim();
  }
  const several = Object.keys(selected).length > 0 || Object.keys(texts).length > 0;
  const action = picked ? "select" : "text";
  if (questions.length === 1 && !several) {
    // One question, one answer: the single value every agent has always read.
    return { action, value: single[questions[0].id] ?? "", answers: {} };
  }
  return {
    action,
    value: null,
    answers: single,
    ...(Object.keys(selected).length ? { selected } : {}),
    ...(Object.keys(texts).length ? { texts } : {}),
  };
}
