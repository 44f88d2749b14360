//! Which windows watch which terminal, over the one daemon connection they share.
//!
//! The daemon keeps one attachment per connection and terminal: a second attach
//! replaces the first (the new one starts with the whole screen, which every window
//! receives and restores from), and a detach ends the stream for the connection. With
//! every window on one connection, a pop-out closing its pane would stop the main
//! window's terminal. So the shell counts watchers: a window's detach reaches the
//! daemon only when no other window still watches that terminal, and a window that
//! closes (or whose page reloads) lets go of its terminals the same way.

use std::collections::{BTreeSet, HashMap};

/// Terminal (session key) → the labels of the windows watching it.
#[derive(Debug, Default)]
pub struct TerminalWatchers {
    by_terminal: HashMap<String, BTreeSet<String>>,
}

impl TerminalWatchers {
    /// `window` attached (or opened) the terminal `key`.
    pub fn watch(&mut self, key: &str, window: &str) {
        self.by_terminal
            .entry(key.to_string())
            .or_default()
            .insert(window.to_string());
    }

    /// `window` detaches from `key`; true when the detach should reach the daemon (no
    /// other window watches it, or nothing was known about it).
    pub fn unwatch(&mut self, key: &str, window: &str) -> bool {
        let Some(windows) = self.by_terminal.get_mut(key) else {
            return true;
        };
        windows.remove(window);
        if windows.is_empty() {
            self.by_terminal.remove(key);
            true
        } else {
            false
        }
    }

    /// The terminal `key` was closed (for every window).
    pub fn closed(&mut self, key: &str) {
        self.by_terminal.remove(key);
    }

    /// `window` watches nothing any more (it closed, or its page reloaded): the
    /// terminals it alone watched, to detach.
    pub fn window_gone(&mut self, window: &str) -> Vec<String> {
        let mut orphaned = Vec::new();
        self.by_terminal.retain(|key, windows| {
            if windows.remove(window) && windows.is_empty() {
                orphaned.push(key.clone());
                false
            } else {
                !windows.is_empty()
            }
        });
        orphaned.sort();
        orphaned
    }

    /// Forgets everything (a new connection holds no attachment).
    pub fn clear(&mut self) {
        self.by_terminal.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_detach_reaches_the_daemon_only_from_the_last_watcher() {
        let mut w = TerminalWatchers::default();
        w.watch("echo:a", "main");
        w.watch("echo:a", "popout-1");
        assert!(!w.unwatch("echo:a", "popout-1"), "main still watches");
        assert!(w.unwatch("echo:a", "main"));
        // Unknown (e.g. attached before a reconnect): forwarded, harmless.
        assert!(w.unwatch("echo:a", "main"));
        // The same window twice counts once.
        w.watch("echo:b", "main");
        w.watch("echo:b", "main");
        assert!(w.unwatch("echo:b", "main"));
    }

    #[test]
    fn a_closed_window_lets_go_of_what_it_alone_watched() {
        let mut w = TerminalWatchers::default();
        w.watch("echo:a", "main");
        w.watch("echo:a", "popout-1");
        w.watch("echo:c", "popout-1");
        w.watch("echo:b", "popout-1");
        assert_eq!(w.window_gone("popout-1"), vec!["echo:b", "echo:c"]);
        assert_eq!(w.window_gone("popout-1"), Vec::<String>::new());
        assert!(w.unwatch("echo:a", "main"));
    }

    #[test]
    fn a_closed_terminal_is_forgotten() {
        let mut w = TerminalWatchers::default();
        w.watch("echo:a", "main");
        w.watch("echo:a", "popout-1");
        w.closed("echo:a");
        assert_eq!(w.window_gone("main"), Vec::<String>::new());
        w.watch("echo:z", "main");
        w.clear();
        assert_eq!(w.window_gone("main"), Vec::<String>::new());
    }
}
