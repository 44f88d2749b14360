import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import type { Plugin } from "vite";
import { readFileSync } from "node:fs";

// The hello carries the UI's version, which is the workspace's (Cargo.toml): the daemon
// serves these files, and a client of another version would make it restart.
const cargo = readFileSync(new URL("../Cargo.toml", import.meta.url), "utf8");
const version = /^\[workspace\.package\][^[]*?^version\s*=\s*"([^"]+)"/ms.exec(cargo)?.[1];
if (!version) throw new Error("no [workspace.package] version in ../Cargo.toml");

// The window runs with Tauri's `freezePrototype`: Object.prototype is frozen, so
// `obj.toString = f` on a plain object throws (the "override mistake"). xterm.js 6
// does exactly that once at load (its KeyCodeUtils namespace); define the property
// instead. Fails the build if the pattern moves, so an xterm upgrade is re-checked.
function xtermFrozenPrototype(): Plugin {
  return {
    name: "weft-xterm-frozen-prototype",
    transform(code, id) {
      if (!/@xterm[\\/]xterm[\\/]lib[\\/]xterm\.mjs/.test(id)) return null;
      const fixed = code.replace(
        /\b([A-Za-z_$][\w$]*)\.toString=([A-Za-z_$][\w$]*);/g,
        (_m, o: string, f: string) => `Object.defineProperty(${o},"toString",{value:${f},writable:true,configurable:true});`,
      );
      if (fixed === code) this.error("xterm.mjs: the toString assignment to patch was not found");
      return { code: fixed, map: null };
    },
  };
}

// Tauri serves the built files from dist/; `tauri dev` uses the dev server below.
export default defineConfig({
  plugins: [svelte(), xtermFrozenPrototype()],
  define: { __WEFT_VERSION__: JSON.stringify(version) },
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  build: { target: "safari15", outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
  test: {
    environment: "jsdom",
    globals: true,
    include: ["src/**/*.test.ts"],
    setupFiles: ["src/test-setup.ts"],
    // Beside waitFor's longer bound (src/test-setup.ts): a loaded machine, not a slow test.
    testTimeout: 30000,
  },
});
