// The UI's patch applier (ui/src/lib/patch.ts) as a line server for the differential
// fuzz target (tests/fuzz/src/patch_ts.rs): each stdin line is {prev, patch, want},
// `want` being what Rust's `apply` made of them; each answer is {ok} or {ok: false,
// why}. The .ts file is transpiled with the UI's own TypeScript (node 20 cannot strip
// types), so what runs is the UI's code as written.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { isDeepStrictEqual } from "node:util";

const ui = new URL("../../../ui/", import.meta.url);
let apply;
try {
  const require = createRequire(new URL("package.json", ui));
  const ts = require("typescript");
  const src = readFileSync(new URL("src/lib/patch.ts", ui), "utf8");
  const js = ts.transpileModule(src, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const mod = { exports: {} };
  new Function("exports", "module", "require", js)(mod.exports, mod, require);
  apply = mod.exports.apply;
} catch (e) {
  process.stdout.write(`cannot load ui/src/lib/patch.ts (npm ci in ui/ first?): ${e}\n`);
  process.exit(1);
}
process.stdout.write("ready\n");

// Rust leaves `recordedAgent` out when it is none; TS keeps the `null` a patch set.
function normal(snap) {
  if (snap && snap.recordedAgent === null) delete snap.recordedAgent;
  return snap;
}

function check({ prev, patch, want }) {
  const prevText = JSON.stringify(prev);
  const patchText = JSON.stringify(patch);
  const got = apply(prev, patch);
  if (JSON.stringify(prev) !== prevText) return "apply changed the previous snapshot";
  if (JSON.stringify(patch) !== patchText) return "apply changed the patch";
  if (!isDeepStrictEqual(normal(got), normal(want))) {
    return `TS made ${JSON.stringify(got)}\nRust made ${JSON.stringify(want)}`;
  }
  const again = apply(prev, patch);
  if (!isDeepStrictEqual(normal(again), normal(want))) {
    return "applied a second time, the patch gives another snapshot";
  }
  return null;
}

createInterface({ input: process.stdin }).on("line", (line) => {
  let why;
  try {
    why = check(JSON.parse(line));
  } catch (e) {
    why = `threw: ${e}`;
  }
  process.stdout.write(why === null ? '{"ok":true}\n' : JSON.stringify({ ok: false, why }) + "\n");
});
