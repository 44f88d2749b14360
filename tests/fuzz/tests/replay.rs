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
