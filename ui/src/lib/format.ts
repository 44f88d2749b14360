// Numbers as people read them: money as money (US$, API prices) and token counts with
// k/M suffixes, for the usage views, the chart's axes and its tooltips alike. Pure, so
// the chart's tick callbacks and the chips say the same thing and are tested here.
//
// Why not Chart.js's default tick labels: it prints a linear axis's ticks with
// `toExponential` once they are small enough (`7.00000E-5`), and knows nothing of money.

const money = new Map<string, Intl.NumberFormat>();

/** An en-US currency format, cached by its options (Intl formats are costly to build). */
function moneyFormat(options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = JSON.stringify(options);
  let format = money.get(key);
  if (!format) {
    format = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", ...options });
    money.set(key, format);
  }
  return format;
}

/**
 * An amount of money: cents from a cent up ($0.43, $1,234.50), two significant digits
 * below a cent so a tiny amount is not rounded to $0.00 ($0.00007, $0.0042).
 */
export function usd(amount: number): string {
  if (!Number.isFinite(amount)) return "–";
  const size = Math.abs(amount);
  if (size === 0 || size >= 0.01) return moneyFormat({ minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(amount);
  return moneyFormat({ maximumSignificantDigits: 2 }).format(amount);
}

/** A cost that may be unknown (no model of it has a price): never shown as $0. */
export function usdOrUnknown(amount: number | null): string {
  return amount === null ? "unknown" : usd(amount);
}

/** The decimals `step` needs to be written exactly (0.025 → 3); at most 10. */
export function decimalsOf(step: number): number {
  for (let d = 0; d < 10; d++) {
    const scaled = Math.abs(step) * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return d;
  }
  return 10;
}

/**
 * A money axis tick. Every tick of an axis gets the decimals its step needs, so they
 * line up (the zero line is $0): step 0.00002 → $0.00002, $0.00004; step 0.5 → $0.50, $1.00; step 50 → $50.
 */
export function usdTick(value: number, step: number): string {
  if (!(step > 0) || !Number.isFinite(step)) return usd(value);
  if (value === 0) return "$0";
  const d = decimalsOf(step);
  const decimals = d === 0 ? 0 : Math.max(2, d);
  return moneyFormat({ minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(value);
}

const units: [number, string][] = [
  [1e9, "B"],
  [1e6, "M"],
  [1e3, "k"],
  [1, ""],
];

function trimmed(n: number, decimals: number): string {
  return n.toFixed(decimals).replace(/\.0+$|(\.\d*?)0+$/, "$1");
}

/** `n` in the largest unit it reaches, at `decimals(scaled)` decimals; 999,960 is "1M", not "1000k". */
function withUnit(n: number, decimals: (scaled: number) => number): string {
  const size = Math.abs(n);
  let at = units.findIndex(([unit]) => size >= unit);
  if (at < 0) at = units.length - 1;
  for (;;) {
    const [unit, suffix] = units[at];
    const places = decimals(n / unit);
    const text = trimmed(n / unit, places);
    if (at > 0 && Math.abs(Number(text)) >= 1000) {
      at -= 1;
      continue;
    }
    return `${text}${suffix}`;
  }
}

/** Below this a count is written out whole (8700): short enough, and exact. */
const WHOLE_BELOW = 10_000;

/**
 * A token count in a few characters: 950, 8700, 12.3k, 190k, 1.2M, 15M, 2.1B; whole
 * below ten thousand, one decimal below a hundred of a unit, none from there on.
 */
export function tokens(n: number): string {
  if (!Number.isFinite(n)) return "–";
  if (Math.abs(n) < WHOLE_BELOW) return String(Math.round(n));
  return withUnit(n, (scaled) => (Math.abs(scaled) >= 99.95 ? 0 : 1));
}

/**
 * A token axis tick. The unit is the axis's (by its largest tick, `top`), so the ticks
 * read alike (0, 2.5k, 5k … 12.5k; 0, 2000 … 8000 on an axis under ten thousand);
 * decimals as the step needs in that unit (1.25M), trailing zeros dropped (1M, 1.5M).
 */
export function tokensTick(value: number, step: number, top = value): string {
  if (!(step > 0) || !Number.isFinite(step)) return tokens(value);
  const size = Math.abs(top);
  const [unit, suffix] = size < WHOLE_BELOW ? units[units.length - 1] : (units.find(([u]) => size >= u) ?? units[units.length - 1]);
  return `${trimmed(value / unit, Math.min(2, decimalsOf(step / unit)))}${value === 0 ? "" : suffix}`;
}

const dayShort = new Intl.DateTimeFormat("en-US", { timeZone: "UTC", month: "short", day: "numeric" });
const dayLong = new Intl.DateTimeFormat("en-US", { timeZone: "UTC", weekday: "short", month: "short", day: "numeric", year: "numeric" });
const monthLong = new Intl.DateTimeFormat("en-US", { timeZone: "UTC", month: "long", year: "numeric" });

function parseKey(key: string): { date: Date; day: boolean } | null {
  const m = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(key);
  if (!m) return null;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, m[3] ? Number(m[3]) : 1));
  return Number.isNaN(date.getTime()) ? null : { date, day: m[3] !== undefined };
}

/** A usage group's key on an axis: a day (UTC, as the daemon groups) as "Jan 15"; other keys as they are. */
export function groupLabel(key: string): string {
  const parsed = parseKey(key);
  if (!parsed) return key;
  return parsed.day ? dayShort.format(parsed.date) : monthLong.format(parsed.date);
}

/** A usage group's key in a tooltip: a day as "Wed, Jan 15, 2025"; other keys as they are. */
export function groupTitle(key: string): string {
  const parsed = parseKey(key);
  if (!parsed) return key;
  return parsed.day ? dayLong.format(parsed.date) : monthLong.format(parsed.date);
}
