//! How the WebView draws. Without a GPU, WebKit's accelerated compositing runs on
//! Mesa's software GL (llvmpipe): the page is rasterized into GL textures held in
//! ordinary memory and composited by the CPU, which costs the web process about
//! 100 MB and buys nothing. WebKit's non-composited path draws the same page
//! directly. So with no GPU render node we turn compositing off, before GTK or
//! WebKit start (the web process inherits the environment).
//!
//! `WEBKIT_DISABLE_COMPOSITING_MODE` set by the user (`0` or `1`) always wins.

use std::path::Path;

const VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// What was decided, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// The user's environment says.
    UserChoice,
    /// A GPU is there: WebKit's default (accelerated compositing).
    Gpu,
    /// No GPU: compositing off.
    SoftwareWithoutCompositing,
}

/// Decides, and sets the environment for WebKit. Call first thing in `main`, before
/// any thread starts (it changes the process environment).
pub fn choose() -> Rendering {
    let decision = decide(
        std::env::var_os(VAR).is_some(),
        has_gpu(Path::new("/dev/dri")),
    );
    if decision == Rendering::SoftwareWithoutCompositing {
        std::env::set_var(VAR, "1");
    }
    decision
}

fn decide(user_set: bool, gpu: bool) -> Rendering {
    match (user_set, gpu) {
        (true, _) => Rendering::UserChoice,
        (false, true) => Rendering::Gpu,
        (false, false) => Rendering::SoftwareWithoutCompositing,
    }
}

/// A DRM render node (`renderD*`) is what Mesa's hardware drivers render through.
fn has_gpu(dri: &Path) -> bool {
    std::fs::read_dir(dri)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_setting_wins_then_a_gpu_keeps_compositing() {
        assert_eq!(decide(true, false), Rendering::UserChoice);
        assert_eq!(decide(true, true), Rendering::UserChoice);
        assert_eq!(decide(false, true), Rendering::Gpu);
        assert_eq!(decide(false, false), Rendering::SoftwareWithoutCompositing);
    }

    #[test]
    fn a_render_node_is_a_gpu_and_a_missing_folder_is_none() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert!(!has_gpu(&dir.path().join("missing")));
        assert!(!has_gpu(dir.path()));
        std::fs::write(dir.path().join("card0"), "").unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !has_gpu(dir.path()),
            "a card node alone is display, not rendering"
        );
        std::fs::write(dir.path().join("renderD128"), "").unwrap_or_else(|e| panic!("{e}"));
        assert!(has_gpu(dir.path()));
    }
}
