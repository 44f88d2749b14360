// Declares the app's own commands so each needs an explicit `allow-<command>`
// permission in capabilities/main.json: the window can reach the daemon through one
// generic request and nothing else we did not list.
fn main() {
    let commands = &[
        "weft_connect",
        "weft_request",
        "quit",
        "app_info",
        "recent_workspaces",
        "add_recent_workspace",
        "remove_recent_workspace",
        "open_log",
        "open_path",
        "save_remote_file",
        "fetch_image",
        "save_window_size",
        "export_session",
        "set_inbox_count",
        "open_window",
        "hosts_list",
        "hosts_add",
        "hosts_remove",
        "hosts_status",
        "hosts_forwards",
        "hosts_forward",
    ];
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(commands));
    if let Err(e) = tauri_build::try_build(attributes) {
        println!("cargo:warning=tauri-build failed: {e:#}");
        std::process::exit(1);
    }
}
