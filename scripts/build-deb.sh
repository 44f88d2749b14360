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
# The Tauri CLI finds src-tauri/ from the repository root and runs beforeBuildCommand
# (`npm run build`) in ui/, where it found its own npm package.
exec ui/node_modules/.bin/tauri build --bundles deb "$@"
