//! A bare Tauri window (a one-line page, no kernel): the baseline that
//! scripts/bench-app.sh measures the desktop app against. It marks itself ready the
//! same way the app does (`data-ready-at` on the root element).
//!
//! `--no-compositing` draws the way the app does on a machine without a GPU
//! (see `weft_app::rendering`), for a second, like-for-like baseline.
use tauri::{WebviewUrl, WebviewWindowBuilder};

fn main() {
    if std::env::args().any(|a| a == "--no-compositing") {
        std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    }
    // The app's own context (icons, identifier), minus its window: this one has no UI.
    let mut context = tauri::generate_context!();
    context.config_mut().app.windows.clear();
    let result = tauri::Builder::default()
        .setup(|app| {
            // ui/public/bare.html: one paragraph and bare.js, which sets the ready mark.
            WebviewWindowBuilder::new(app, "main", WebviewUrl::App("bare.html".into()))
                .title("bare")
                .inner_size(1280.0, 800.0)
                .build()?;
            Ok(())
        })
        .run(context);
    if let Err(e) = result {
        eprintln!("bare: {e}");
        std::process::exit(1);
    }
}
