import { describe, expect, it } from "vitest";
import { decimalsOf, groupLabel, groupTitle, tokens, tokensTick, usd, usdOrUnknown, usdTick } from "./format";

describe("usd", () => {
  it("writes cents from a cent up, with grouping", () => {
    expect(usd(0.4321)).toBe("$0.43");
    expect(usd(1234.5)).toBe("$1,234.50");
    expect(usd(0.01)).toBe("$0.01");
    expect(usd(0)).toBe("$0.00");
  });

  it("keeps a tiny amount readable instead of $0.00 or 7.00000E-5", () => {
    expect(usd(0.00007)).toBe("$0.00007");
    expect(usd(0.0042)).toBe("$0.0042");
    expect(usd(-0.00007)).toBe("-$0.00007");
  });

  it("says unknown for a cost no price was found for", () => {
    expect(usdOrUnknown(null)).toBe("unknown");
    expect(usdOrUnknown(0.25)).toBe("$0.25");
  });
});

describe("usdTick", () => {
  const axis = (step: number, n: number) => Array.from({ length: n }, (_, i) => usdTick(i * step, step));

  it("gives every tick of a tiny axis the decimals its step needs", () => {
    expect(axis(0.00002, 5)).toEqual(["$0", "$0.00002", "$0.00004", "$0.00006", "$0.00008"]);
    expect(usdTick(0.00007, 0.00001)).toBe("$0.00007");
  });

  it("writes cents below a dollar step and whole dollars above", () => {
    expect(axis(0.5, 3)).toEqual(["$0", "$0.50", "$1.00"]);
    expect(axis(0.025, 3)).toEqual(["$0", "$0.025", "$0.050"]);
    expect(axis(50, 3)).toEqual(["$0", "$50", "$100"]);
    expect(usdTick(2.5, 2.5)).toBe("$2.50");
    expect(usdTick(12_000, 2000)).toBe("$12,000");
  });

  it("falls back to a plain amount without a step", () => {
    expect(usdTick(0.00007, 0)).toBe("$0.00007");
  });
});

describe("decimalsOf", () => {
  it("counts the decimals of nice steps despite floating point", () => {
    expect(decimalsOf(1)).toBe(0);
    expect(decimalsOf(0.1 + 0.2 - 0.2)).toBe(1);
    expect(decimalsOf(0.025)).toBe(3);
    expect(decimalsOf(0.00002)).toBe(5);
  });
});

describe("tokens", () => {
  it("writes counts with k/M/B suffixes from ten thousand, whole below", () => {
    expect(tokens(950)).toBe("950");
    expect(tokens(8700)).toBe("8700");
    expect(tokens(10_000)).toBe("10k");
    expect(tokens(12_345)).toBe("12.3k");
    expect(tokens(190_000)).toBe("190k");
    expect(tokens(1_200_000)).toBe("1.2M");
    expect(tokens(15_000_000)).toBe("15M");
    expect(tokens(2_100_000_000)).toBe("2.1B");
  });

  it("moves up a unit rather than write 1000k", () => {
    expect(tokens(999_960)).toBe("1M");
    expect(tokens(99_960)).toBe("100k");
  });
});

describe("tokensTick", () => {
  const axis = (step: number, n: number) => Array.from({ length: n }, (_, i) => tokensTick(i * step, step, (n - 1) * step));

  it("writes every tick in the axis's unit with the step's precision, without trailing zeros", () => {
    expect(axis(250_000, 7)).toEqual(["0", "0.25M", "0.5M", "0.75M", "1M", "1.25M", "1.5M"]);
    expect(axis(2500, 6)).toEqual(["0", "2.5k", "5k", "7.5k", "10k", "12.5k"]);
  });

  it("writes an axis under ten thousand whole", () => {
    expect(axis(2000, 5)).toEqual(["0", "2000", "4000", "6000", "8000"]);
    expect(tokensTick(0.5, 0.5, 2)).toBe("0.5");
  });
});

describe("groupLabel / groupTitle", () => {
  it("writes the daemon's UTC days and months as dates", () => {
    expect(groupLabel("2025-01-15")).toBe("Jan 15");
    expect(groupTitle("2025-01-15")).toBe("Wed, Jan 15, 2025");
    expect(groupLabel("2025-01")).toBe("January 2025");
  });

  it("leaves other group keys as they are", () => {
    expect(groupLabel("claude-sonnet-4-5")).toBe("claude-sonnet-4-5");
    expect(groupTitle("2025-W03")).toBe("2025-W03");
  });
});
