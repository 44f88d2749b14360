//! The conformance suite every driver runs, against the real `codex app-server`.

use super::support::CodexHarness;

weft_testkit::conformance_tests!(CodexHarness);
