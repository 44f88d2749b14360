// Declares the app's own commands so each needs an explicit `allow-<command>`
// permission in capabilities/main.json: the window can call Weft's verbs and nothing
// else we did not list.
fn main() {
    let commands = &[
        "prompt",
        "stop",
        "steer",
        "interact",
        "get_snapshot",
        "get_history",
        "list_sessions",
        "search",
        "list_agent_info",
        "list_models",
        "list_effort",
        "list_tools",
        "list_skills",
        "app_info",
        "recent_workspaces",
        "add_recent_workspace",
        "open_log",
        "terminal_open",
        "terminal_attach",
        "terminal_write",
        "terminal_resize",
        "terminal_close",
    ];
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(commands));
    if let Err(e) = tauri_build::try_build(attributes) {
        println!("cargo:warning=tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}
