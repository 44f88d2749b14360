//! The desktop window's reach, kept in sight: every command the Tauri shell registers
//! (its `generate_handler!` and `build.rs` lists) and every permission its capabilities
//! grant must be named in the security section of docs/desktop-app.md. A command or a
//! permission added without saying so there fails here.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The names inside `generate_handler![ … ]` in the shell's source.
fn handler_commands() -> Vec<String> {
    let src = read("src-tauri/src/lib.rs");
    let start = src
        .find("generate_handler![")
        .unwrap_or_else(|| panic!("no generate_handler! in src-tauri/src/lib.rs"));
    let body = &src[start + "generate_handler![".len()..];
    let body = &body[..body.find(']').unwrap_or(body.len())];
    body.split(',')
        .map(|c| c.trim().rsplit("::").next().unwrap_or_default().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The quoted names of build.rs's command list.
fn build_commands() -> Vec<String> {
    let src = read("src-tauri/build.rs");
    let start = src
        .find("let commands = &[")
        .unwrap_or_else(|| panic!("no command list in src-tauri/build.rs"));
    let body = &src[start..];
    let body = &body[..body.find("];").unwrap_or(body.len())];
    body.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Every permission identifier granted by a capability file.
fn permissions() -> Vec<(String, String)> {
    let dir = repo().join("src-tauri/capabilities");
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no capability in {}", dir.display());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
        let cap: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = cap["identifier"].as_str().unwrap_or_default().to_string();
        for p in cap["permissions"].as_array().into_iter().flatten() {
            let id = p
                .as_str()
                .or_else(|| p["identifier"].as_str())
                .unwrap_or_default();
            out.push((name.clone(), id.to_string()));
        }
    }
    out
}

/// The text of docs/desktop-app.md's `## Security` section.
fn security_section() -> String {
    let doc = read("docs/desktop-app.md");
    let start = doc
        .find("## Security")
        .unwrap_or_else(|| panic!("docs/desktop-app.md has no Security section"));
    let rest = &doc[start + 2..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
}

#[test]
fn every_tauri_command_and_permission_is_named_in_the_security_section() {
    let section = security_section();
    let named = |name: &str| section.contains(&format!("`{name}`"));
    let handler = handler_commands();
    assert!(handler.contains(&"weft_request".to_string()), "{handler:?}");
    let mut missing = Vec::new();
    for c in handler.iter().chain(build_commands().iter()) {
        if !named(c) {
            missing.push(format!("command `{c}`"));
        }
    }
    for (cap, p) in permissions() {
        if !named(&p) {
            missing.push(format!("permission `{p}` (capability {cap})"));
        }
    }
    missing.dedup();
    assert!(
        missing.is_empty(),
        "not named in docs/desktop-app.md's Security section: {missing:?}"
    );
}

#[test]
fn the_shell_registers_exactly_the_commands_build_rs_gates() {
    let mut handler = handler_commands();
    let mut built = build_commands();
    handler.sort();
    built.sort();
    assert_eq!(
        handler, built,
        "generate_handler! and build.rs's command list differ: a command without an \
         allow- permission, or a permission for no command"
    );
}
