//! A place of the app in a window of its own: a session popped out beside the main
//! window. The window loads the app's own page at the address the UI asked for
//! (`#/s/<key>`), and is one more client of the daemon through the shared link
//! ([`crate::link`]): it gets every patch as the main window does.
//!
//! The address comes from the page, so it is checked before it goes near a URL: `#/`
//! then printable ASCII, bounded. It is only ever a fragment joined to the app's own
//! page, so whatever it holds the window's origin is the app's; the navigation guard
//! ([`crate::navigation`]) holds for these windows as for the main one, and
//! capabilities/main.json grants their labels (`popout-*`) exactly what the main window
//! has.

use std::sync::atomic::{AtomicU64, Ordering};

use tauri::{AppHandle, Manager, Runtime, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

/// Every pop-out window's label starts so (capabilities/main.json grants `popout-*`).
pub const LABEL_PREFIX: &str = "popout-";
/// The longest address a window is opened at (a session key is ~50 characters; a
/// library search a few hundred at most).
pub const MAX_ADDRESS: usize = 1024;
const MAX_TITLE: usize = 80;

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("a window opens at an address of the app (\"#/…\")")]
    NotAnAddress,
    #[error("that address is longer than {MAX_ADDRESS} characters")]
    TooLong,
    #[error("an address is printable ASCII without spaces (the UI percent-encodes the rest)")]
    NotPrintable,
}

/// `hash` when it is an address a window may open at: `#/`, then printable ASCII other
/// than space, at most [`MAX_ADDRESS`] bytes in all.
pub fn check(hash: &str) -> Result<&str, AddressError> {
    if !hash.starts_with("#/") {
        return Err(AddressError::NotAnAddress);
    }
    if hash.len() > MAX_ADDRESS {
        return Err(AddressError::TooLong);
    }
    if !hash.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(AddressError::NotPrintable);
    }
    Ok(hash)
}

/// The window's title: "Weft — " and what it shows (the session key of `#/s/<key>`,
/// else the view's name), percent-decoded, at most [`MAX_TITLE`] characters.
pub fn title(hash: &str) -> String {
    let path = hash
        .trim_start_matches("#/")
        .split(['?', '#'])
        .next()
        .unwrap_or("");
    let mut parts = path.split('/');
    let what = match (parts.next(), parts.next()) {
        (Some("s"), Some(key)) if !key.is_empty() => percent_decoded(key),
        (Some(""), _) | (Some("new"), _) | (None, _) => "new session".to_string(),
        (Some(view), _) => percent_decoded(view),
    };
    let what: String = if what.chars().count() > MAX_TITLE {
        let mut short: String = what.chars().take(MAX_TITLE - 1).collect();
        short.push('…');
        short
    } else {
        what
    };
    format!("Weft — {what}")
}

/// `%XX` sequences decoded, when the result is UTF-8 without control characters;
/// otherwise the text as it is.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let value = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    match String::from_utf8(out) {
        Ok(s) if !s.chars().any(char::is_control) => s,
        _ => text.to_string(),
    }
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A label no window of this run has had.
fn next_label() -> String {
    format!("{LABEL_PREFIX}{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// True for a pop-out window's label.
pub fn is_popout(label: &str) -> bool {
    label
        .strip_prefix(LABEL_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The pop-out already showing `hash`, if one is.
fn showing<R: Runtime>(app: &AppHandle<R>, hash: &str) -> Option<WebviewWindow<R>> {
    let fragment = hash.strip_prefix('#')?;
    app.webview_windows()
        .into_iter()
        .filter(|(label, _)| is_popout(label))
        .map(|(_, window)| window)
        .find(|window| {
            window
                .url()
                .is_ok_and(|url| url.fragment() == Some(fragment))
        })
}

/// Why no window opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Address(#[from] AddressError),
    #[error("opening a window: {0}")]
    Window(#[from] tauri::Error),
}

/// Opens the app at `hash` in a window of its own, or brings forward the pop-out that
/// already shows it. The address is checked first ([`check`]).
pub fn open<R: Runtime>(app: &AppHandle<R>, hash: &str) -> Result<WebviewWindow<R>, OpenError> {
    let hash = check(hash)?;
    if let Some(window) = showing(app, hash) {
        window.unminimize()?;
        window.show()?;
        window.set_focus()?;
        return Ok(window);
    }
    let label = next_label();
    // A fragment-only reference: joined to the app's own page, it changes nothing but
    // the fragment (`tauri://localhost#/s/…`).
    let window = WebviewWindowBuilder::new(app, &label, WebviewUrl::App(hash.into()))
        .title(title(hash))
        .inner_size(960.0, 720.0)
        .min_inner_size(720.0, 480.0)
        .build()?;
    tracing::info!(%label, address = hash, "opened a window");
    Ok(window)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tauri::Url;

    #[test]
    fn only_the_apps_addresses_in_printable_ascii_are_opened() {
        for ok in [
            "#/s/claude%3A2beba834-ea9e",
            "#/inbox",
            "#/",
            "#/library?q=a%20b",
            "#/s/echo%3Aa?with=echo%3Ab",
        ] {
            assert_eq!(check(ok), Ok(ok), "{ok}");
        }
        for (bad, why) in [
            ("", AddressError::NotAnAddress),
            ("#", AddressError::NotAnAddress),
            ("#inbox", AddressError::NotAnAddress),
            ("/inbox", AddressError::NotAnAddress),
            ("https://evil.example/#/", AddressError::NotAnAddress),
            ("//evil.example/#/", AddressError::NotAnAddress),
            ("javascript:alert(1)", AddressError::NotAnAddress),
            ("#/s/a b", AddressError::NotPrintable),
            ("#/s/a\nb", AddressError::NotPrintable),
            ("#/s/a\u{0}", AddressError::NotPrintable),
            ("#/s/é", AddressError::NotPrintable),
            ("#/s/\u{202e}", AddressError::NotPrintable),
        ] {
            assert_eq!(check(bad), Err(why), "{bad:?}");
        }
        let long = format!("#/s/{}", "a".repeat(MAX_ADDRESS));
        assert_eq!(check(&long), Err(AddressError::TooLong));
        assert!(check(&long[..MAX_ADDRESS]).is_ok());
    }

    /// What Tauri does with the address (`WebviewUrl::App`: the app's URL joined with
    /// it) never leaves the app's origin, for any address `check` lets through.
    #[test]
    fn an_accepted_address_only_ever_sets_the_fragment() {
        for base in ["tauri://localhost", "http://tauri.localhost/"] {
            let base = Url::parse(base).unwrap_or_else(|e| panic!("{e}"));
            for hash in [
                "#/s/echo%3Aa",
                "#//evil.example/x",
                "#/\\\\evil.example",
                "#/..%2F..%2Fetc",
                "#/s/a#b?c=//d@evil.example:80",
                "#/javascript:alert(1)",
            ] {
                let hash = check(hash).unwrap_or_else(|e| panic!("{hash}: {e}"));
                let url = base.join(hash).unwrap_or_else(|e| panic!("{hash}: {e}"));
                assert_eq!(
                    (url.scheme(), url.host_str(), url.port(), url.path()),
                    (base.scheme(), base.host_str(), base.port(), base.path()),
                    "{hash}"
                );
                assert!(crate::navigation::is_app_url(&url, None), "{url}");
                assert_eq!(url.fragment(), Some(&hash[1..]));
            }
        }
    }

    #[test]
    fn titles_name_the_session_or_the_view() {
        assert_eq!(title("#/s/claude%3Aabc"), "Weft — claude:abc");
        assert_eq!(title("#/s/echo%3Aa?with=echo%3Ab"), "Weft — echo:a");
        assert_eq!(title("#/inbox"), "Weft — inbox");
        assert_eq!(title("#/settings/accounts"), "Weft — settings");
        assert_eq!(title("#/library?q=x"), "Weft — library");
        assert_eq!(title("#/"), "Weft — new session");
        assert_eq!(title("#/new"), "Weft — new session");
        // Not UTF-8, or a control character once decoded: shown as it came.
        assert_eq!(title("#/s/a%FF"), "Weft — a%FF");
        assert_eq!(title("#/s/a%0Ab"), "Weft — a%0Ab");
        assert_eq!(title("#/s/100%"), "Weft — 100%");
        let long = title(&format!("#/s/{}", "k".repeat(200)));
        assert_eq!(long.chars().count(), "Weft — ".chars().count() + MAX_TITLE);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn labels_are_unique_and_recognised() {
        let (a, b) = (next_label(), next_label());
        assert_ne!(a, b);
        assert!(is_popout(&a) && is_popout(&b));
        for not in ["main", "popout-", "popout-x", "popout-1/2", "xpopout-1"] {
            assert!(!is_popout(not), "{not}");
        }
    }

    #[test]
    fn opens_a_window_at_the_address_once_and_refuses_a_bad_one() {
        let app = tauri::test::mock_app();
        let handle = app.handle();
        let first = open(handle, "#/s/echo%3Aa").unwrap_or_else(|e| panic!("{e}"));
        assert!(is_popout(first.label()), "{}", first.label());
        let url = first.url().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url.fragment(), Some("/s/echo%3Aa"));
        assert!(crate::navigation::is_app_url(&url, None), "{url}");
        // The same address again: the window that shows it, not a second one.
        let again = open(handle, "#/s/echo%3Aa").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.label(), first.label());
        let other = open(handle, "#/s/echo%3Ab").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(other.label(), first.label());
        assert!(open(handle, "https://evil.example/").is_err());
        assert_eq!(handle.webview_windows().len(), 2);
    }
}
