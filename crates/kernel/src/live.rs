//! A running command's output as its tool row shows it: the latest part (the last
//! [`LIVE`] bytes, with a count of what came before), updated at most every
//! [`EVERY`] so a chatty command does not flood the clients — the same the native
//! agent's shell tool shows. What is held back by the throttle is shown when it is due
//! ([`LiveOutput::due_at`]), so the last lines of a command that then goes quiet are
//! not left out. The finished row carries the whole (capped) output instead. One piece
//! for every driver that streams a command's output (Codex, ACP agents).

use std::time::{Duration, Instant};

/// How much of the output so far the running row shows: its latest part, this long.
pub const LIVE: usize = 8 * 1024;
/// How often a running row is updated at most.
pub const EVERY: Duration = Duration::from_millis(250);

/// One running call's output so far.
#[derive(Debug, Default, Clone)]
pub struct LiveOutput {
    tail: String,
    total: usize,
    shown: Option<Instant>,
    pending: bool,
}

impl LiveOutput {
    /// Appends what the command wrote.
    pub fn push(&mut self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.total += delta.len();
        self.tail.push_str(delta);
        self.keep_tail();
        self.pending = true;
    }

    /// Replaces the output so far with `whole` (an agent that sends it all each time).
    pub fn replace(&mut self, whole: &str) {
        if whole.len() == self.total
            && self.tail.len() <= whole.len()
            && whole.ends_with(&self.tail)
        {
            return;
        }
        self.total = whole.len();
        self.tail = whole.to_string();
        self.keep_tail();
        self.pending = true;
    }

    fn keep_tail(&mut self) {
        if self.tail.len() > LIVE {
            let mut cut = self.tail.len() - LIVE;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.tail.drain(..cut);
        }
    }

    /// The row's text, when something new is due at `now` (and it is marked shown).
    pub fn take_due(&mut self, now: Instant) -> Option<String> {
        if !self.pending || self.shown.is_some_and(|at| now.duration_since(at) < EVERY) {
            return None;
        }
        self.shown = Some(now);
        self.pending = false;
        Some(self.text())
    }

    /// When output held back by the throttle is due.
    pub fn due_at(&self) -> Option<Instant> {
        if !self.pending {
            return None;
        }
        Some(self.shown.map_or_else(Instant::now, |at| at + EVERY))
    }

    /// The output so far as the running row shows it.
    pub fn text(&self) -> String {
        if self.total > self.tail.len() {
            format!(
                "[… {} bytes before]\n{}",
                self.total - self.tail.len(),
                self.tail
            )
        } else {
            self.tail.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_part_and_holds_back_what_comes_too_soon() {
        let mut l = LiveOutput::default();
        let t0 = Instant::now();
        l.push("first\n");
        assert_eq!(l.take_due(t0).as_deref(), Some("first\n"));
        l.push(&"x".repeat(LIVE));
        l.push("last\n");
        assert_eq!(l.take_due(t0 + EVERY / 2), None);
        assert_eq!(l.due_at(), Some(t0 + EVERY));
        let text = l.take_due(t0 + EVERY).unwrap_or_default();
        assert!(text.starts_with("[… 11 bytes before]\n"), "{text}");
        assert!(text.ends_with("xlast\n"));
        assert_eq!(l.due_at(), None);
        l.replace("é".repeat(LIVE).as_str());
        assert!(l.text().contains("bytes before"));
    }
}
