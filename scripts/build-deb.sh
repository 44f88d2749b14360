#!/usr/bin/env bash
# Builds the desktop app's .deb (menu entry + icon) with the Tauri CLI from npm:
#   scripts/build-deb.sh      →  target/release/bundle/deb/Weft_<version>_amd64.deb
#   sudo apt install ./target/release/bundle/deb/Weft_*_amd64.deb
# AppImage is not built: its bundler downloads its own tooling at build time, which
# this kind of machine cannot do.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
"$ROOT/scripts/setup.sh" setup_desktop_app
# The package carries the `weft` binary too (/usr/bin/weft, beside the app): a
# double-clicked app starts its kernel service from it, with nothing else installed;
# and the UI's files (/usr/share/weft/ui) for `weft serve`'s browser UI. They are
# staged where tauri.conf.json's deb `files` expect them.
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -p weft-cli
# The Matrix surface, its own workspace (docs/matrix.md), built into the same target.
cargo build --release --manifest-path surfaces/matrix/Cargo.toml --locked
npm --prefix ui run build --silent
rm -rf "$ROOT/target/deb-stage"
mkdir -p "$ROOT/target/deb-stage"
cp "$TARGET/release/weft" "$ROOT/target/deb-stage/weft"
# The Landlock sandbox's helper, where `weft` looks for it: beside it (/usr/bin).
cp "$TARGET/release/weft-sandbox-exec" "$ROOT/target/deb-stage/weft-sandbox-exec"
# The Matrix surface, where `weft matrix` and the daemon look for it: beside `weft`.
cp "$TARGET/release/weft-matrix" "$ROOT/target/deb-stage/weft-matrix"
cp -r "$ROOT/ui/dist" "$ROOT/target/deb-stage/ui"
# The Tauri CLI finds src-tauri/ from the repository root and runs beforeBuildCommand
# (`npm run build`) in ui/, where it found its own npm package.
exec ui/node_modules/.bin/tauri build --bundles deb "$@"
