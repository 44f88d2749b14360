// Keeps a release build from opening a console on Windows; harmless elsewhere.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    if let Err(e) = weft_app::run() {
        eprintln!("weft: {e:#}");
        std::process::exit(1);
    }
}
