//! The window stays on the app: any navigation away from its own pages is refused.
//!
//! Agent output is sanitized and its links are opened outside the window (the system
//! browser, the user's editor), but a link the page did not catch would replace Weft's
//! window with whatever page it names: no IPC there, yet a perfect place to phish. This
//! is the last wall, whatever the page does: the WebView asks before each top-level
//! navigation, and only the app's own origin is allowed.

use tauri::plugin::{Builder, TauriPlugin};
use tauri::{Runtime, Url};

/// The app's pages: the bundled UI as the WebView serves it (`tauri://localhost` on
/// Linux and macOS, `http(s)://tauri.localhost` on Windows), or, in a dev build, the
/// dev server (`dev_url`).
pub fn is_app_url(url: &Url, dev_url: Option<&Url>) -> bool {
    let bundled = match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        "http" | "https" => url.host_str() == Some("tauri.localhost") && url.port().is_none(),
        _ => false,
    };
    bundled || dev_url.is_some_and(|dev| dev.origin() == url.origin())
}

/// The plugin that refuses every other navigation of every window.
pub fn guard<R: Runtime>(dev_url: Option<Url>) -> TauriPlugin<R> {
    Builder::new("weft-navigation")
        .on_navigation(move |_webview, url| {
            let allowed = is_app_url(url, dev_url.as_ref());
            if !allowed {
                // Said once per attempt: the page tried to leave the app.
                tracing::warn!(%url, "refused a navigation away from the app");
            }
            allowed
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn only_the_apps_own_pages_are_allowed() {
        for ok in [
            "tauri://localhost",
            "tauri://localhost/index.html#/x",
            "http://tauri.localhost/",
            "https://tauri.localhost/assets/x.js",
        ] {
            assert!(is_app_url(&url(ok), None), "{ok}");
        }
        for bad in [
            "https://evil.example/nav",
            "http://127.0.0.1:8080/",
            "tauri://evil.example/",
            "https://tauri.localhost.evil.example/",
            "http://tauri.localhost:8080/",
            "file:///etc/passwd",
            "data:text/html,<h1>x</h1>",
            "about:blank",
            "javascript:alert(1)",
            // The dev server is not the app in a bundled build.
            "http://localhost:1420/",
        ] {
            assert!(!is_app_url(&url(bad), None), "{bad}");
        }
    }

    #[test]
    fn a_dev_build_allows_its_dev_server_origin_only() {
        let dev = url("http://localhost:1420");
        assert!(is_app_url(
            &url("http://localhost:1420/index.html"),
            Some(&dev)
        ));
        assert!(!is_app_url(&url("http://localhost:1421/"), Some(&dev)));
        assert!(!is_app_url(&url("https://localhost:1420/"), Some(&dev)));
        assert!(is_app_url(&url("tauri://localhost/"), Some(&dev)));
    }
}
