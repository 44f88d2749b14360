//! A bare Tauri window (one static page, no kernel): the baseline that
//! scripts/bench-app.sh measures the desktop app against.
fn main() {
    if let Err(e) = tauri::Builder::default().run(tauri::generate_context!("bare.conf.json")) {
        eprintln!("bare: {e}");
        std::process::exit(1);
    }
}
