//! Replays every fuzz corpus (`corpus/<target>/`: seeds from the recorded fixtures, and
//! crashes kept as regressions) through its target, so `cargo test` covers them.

use std::path::Path;

#[test]
fn every_corpus_input_replays_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut replayed = 0;
    for (name, target) in weft_fuzz_targets::TARGETS {
        if *name == "patch_ts" {
            if let Some(why) = weft_fuzz_targets::patch_ts_unavailable() {
                // CI installs node and the UI's dependencies: there it must run.
                assert!(
                    std::env::var("CI").map_or(true, |v| v != "true"),
                    "CI=true and the TS applier cannot run: {why}"
                );
                eprintln!("SKIPPED: patch_ts ({why})");
                continue;
            }
        }
        let dir = root.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus for {name}");
        for file in files {
            let data = std::fs::read(&file).unwrap_or_else(|e| panic!("{e}"));
            let run = std::panic::catch_unwind(|| target(&data));
            assert!(run.is_ok(), "{name} panics on {}", file.display());
            replayed += 1;
        }
    }
    println!("replayed {replayed} inputs");
}

/// The shell guard's corpus (crates/shell-guard/tests/fixtures/corpus.txt: lines that
/// look read-only and run code or write, and their look-alikes) seeds the shell
/// target: each entry is a file `corpus/shell/guard-NNN`. `WEFT_UPDATE_SEEDS=1` writes
/// the missing ones.
#[test]
fn the_shell_target_is_seeded_with_the_guards_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(root.join("../../crates/shell-guard/tests/fixtures/corpus.txt"))
            .unwrap_or_else(|e| panic!("{e}"));
    let mut entries: Vec<String> = Vec::new();
    for l in text.lines() {
        if let Some(more) = l.strip_prefix("  ") {
            if let Some(last) = entries.last_mut() {
                last.push('\n');
                last.push_str(more);
            }
        } else if !l.trim().is_empty() && !l.starts_with('#') {
            entries.push(l.get(2..).unwrap_or("").trim_end().to_string());
        }
    }
    let dir = root.join("corpus/shell");
    let seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    let update = std::env::var("WEFT_UPDATE_SEEDS").is_ok_and(|v| v == "1");
    let mut missing = Vec::new();
    for e in &entries {
        if seeds.iter().any(|s| s == e.as_bytes()) {
            continue;
        }
        if update {
            // FNV-1a: a name that is the same for the same line, whatever its place.
            let hash = e.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            });
            std::fs::write(dir.join(format!("guard-{hash:016x}")), e)
                .unwrap_or_else(|e| panic!("{e}"));
        } else {
            missing.push(e.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "{} corpus lines are not seeds (WEFT_UPDATE_SEEDS=1 cargo test -p weft-fuzz-targets writes them): {missing:?}",
        missing.len()
    );
}
