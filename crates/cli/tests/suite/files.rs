//! `listWorkspaceFiles` (the composer's `@path` completion) through the daemon, as the
//! window and the browser send it: what git ignores is not offered, a nested file is
//! found by part of its name, nothing outside the workspace is reached (a query with
//! `..`, a link pointing out), and a workspace that is not a folder is refused.

use std::path::Path;

use weft_client::Home;
use weft_protocol::{ErrorCode, WorkspaceEntry, WorkspaceEntryKind, WorkspaceFilesQuery};

use super::support::{write, Env};

fn query(workspace: &Path, q: &str) -> WorkspaceFilesQuery {
    WorkspaceFilesQuery {
        workspace: workspace.display().to_string(),
        query: q.into(),
        limit: None,
    }
}

#[tokio::test]
async fn workspace_files_are_matched_without_ignored_ones_and_never_from_outside() {
    let env = Env::new();
    let work = env.real_work();
    write(&work.join(".gitignore"), "build/\n*.log\n");
    write(
        &work.join("src/deep/nested/widget_parser.rs"),
        "fn main() {}\n",
    );
    write(&work.join("build/widget_parser.rs"), "generated\n");
    write(&work.join("widget.log"), "noise\n");
    write(&work.join(".git/widget_head"), "ref\n");
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(&outside.path().join("widget_secret.txt"), "secret\n");
    std::os::unix::fs::symlink(outside.path(), work.join("linked"))
        .unwrap_or_else(|e| panic!("{e}"));

    let hello = super::support::app_hello();
    let home = Home::at(env.home.path());
    let program = Path::new(env!("CARGO_BIN_EXE_weft"));
    let connected = weft_client::start::connect_or_start(&home, hello, Some(program))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let client = connected.client;

    let found: Vec<WorkspaceEntry> = client
        .send(query(&work, "widget"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let paths: Vec<&str> = found.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["src/deep/nested/widget_parser.rs"], "{found:?}");
    assert_eq!(found[0].kind, WorkspaceEntryKind::File);

    // Fuzzy, and folders are offered as folders.
    let found: Vec<WorkspaceEntry> = client
        .send(query(&work, "srcnest"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        found.first(),
        Some(&WorkspaceEntry {
            path: "src/deep/nested".into(),
            kind: WorkspaceEntryKind::Dir
        }),
        "{found:?}"
    );

    // The link is offered as itself, its target's files are not.
    let found: Vec<WorkspaceEntry> = client
        .send(query(&work, "linked"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        found.iter().all(|e| !e.path.contains("secret")),
        "{found:?}"
    );

    let escaped = client
        .send(query(&work, "../"))
        .await
        .err()
        .unwrap_or_else(|| panic!("a query leaving the workspace was answered"));
    assert_eq!(escaped.code, ErrorCode::BadRequest);
    assert!(
        escaped.message.contains("outside the workspace"),
        "{}",
        escaped.message
    );

    let not_a_folder = client
        .send(query(&work.join(".gitignore"), "x"))
        .await
        .err()
        .unwrap_or_else(|| panic!("a file as the workspace was answered"));
    assert_eq!(not_a_folder.code, ErrorCode::BadWorkdir);
    assert!(
        not_a_folder.message.contains("is not a folder"),
        "{}",
        not_a_folder.message
    );
}
