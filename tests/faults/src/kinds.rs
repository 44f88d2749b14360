//! The kinds of fault, their weights in a random run, and what an honest end is for each.

use crate::report::Ending;

/// A kind of fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// The stand-in claude SIGKILLed mid-stream.
    AgentKill,
    /// The stand-in claude stops writing; the stall timeout must end the turn.
    AgentHang,
    /// The stand-in exits in the middle of a line.
    CutLine,
    /// A 16 MiB line amid the stream (over the driver's line cap).
    HugeLine,
    /// A text delta with invalid UTF-8.
    BadUtf8,
    /// Non-JSON, binary and unknown lines amid the stream.
    Garbage,
    /// The stand-in codex answers turn/start with another request's id.
    WrongId,
    /// The daemon SIGKILLed mid-turn and started again.
    DaemonKill,
    /// The following client's connection dropped mid-stream; a new one subscribes.
    /// Every other one is a WebSocket client of `weft serve` (dropped without a close
    /// frame, then connecting again), the rest the daemon's own socket.
    ClientDrop,
    /// A streaming `weft run` SIGKILLed; a new client subscribes.
    CliKill,
    /// The real claude SIGKILLed mid-stream.
    ClaudeKill,
    /// The model server answers 500 (real claude).
    Http500,
    /// 529, overloaded (real claude).
    Http529,
    /// 429, rate limited (real claude).
    Http429,
    /// The model server cuts the connection mid-stream (real claude).
    ServerDrop,
    /// The model server stops sending mid-stream (real claude).
    ServerStall,
    /// The real codex SIGKILLed mid-stream.
    CodexKill,
    /// The model server answers 500 (real codex).
    CodexHttp500,
    /// The model server cuts the connection mid-stream (real codex).
    CodexServerDrop,
    /// The store's file system fills up mid-turn (a small tmpfs).
    DiskFull,
    /// The store's file system turns read-only mid-turn.
    ReadonlyHome,
}

impl Kind {
    /// Every kind, with its weight in a random run.
    pub const WEIGHTS: [(Kind, u32); 21] = [
        (Kind::AgentKill, 8),
        (Kind::AgentHang, 4),
        (Kind::CutLine, 6),
        (Kind::HugeLine, 3),
        (Kind::BadUtf8, 6),
        (Kind::Garbage, 6),
        (Kind::WrongId, 5),
        (Kind::DaemonKill, 6),
        (Kind::ClientDrop, 8),
        (Kind::CliKill, 5),
        (Kind::ClaudeKill, 2),
        (Kind::Http500, 2),
        (Kind::Http529, 1),
        (Kind::Http429, 1),
        (Kind::ServerDrop, 2),
        (Kind::ServerStall, 1),
        (Kind::CodexKill, 2),
        (Kind::CodexHttp500, 1),
        (Kind::CodexServerDrop, 1),
        (Kind::DiskFull, 3),
        (Kind::ReadonlyHome, 3),
    ];

    /// A kind, by weight.
    pub fn pick(rng: &mut fastrand::Rng) -> Kind {
        let total: u32 = Self::WEIGHTS.iter().map(|(_, w)| w).sum();
        let mut n = rng.u32(..total);
        for (k, w) in Self::WEIGHTS {
            if n < w {
                return k;
            }
            n -= w;
        }
        Kind::AgentKill
    }

    /// Its name in the table and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AgentKill => "agent_kill",
            Kind::AgentHang => "agent_hang",
            Kind::CutLine => "cut_line",
            Kind::HugeLine => "huge_line",
            Kind::BadUtf8 => "bad_utf8",
            Kind::Garbage => "garbage",
            Kind::WrongId => "wrong_id",
            Kind::DaemonKill => "daemon_kill",
            Kind::ClientDrop => "client_drop",
            Kind::CliKill => "cli_kill",
            Kind::ClaudeKill => "claude_kill",
            Kind::Http500 => "http_500",
            Kind::Http529 => "http_529",
            Kind::Http429 => "http_429",
            Kind::ServerDrop => "server_drop",
            Kind::ServerStall => "server_stall",
            Kind::CodexKill => "codex_kill",
            Kind::CodexHttp500 => "codex_http_500",
            Kind::CodexServerDrop => "codex_server_drop",
            Kind::DiskFull => "disk_full",
            Kind::ReadonlyHome => "readonly_home",
        }
    }

    /// The kind called `name`.
    pub fn parse(name: &str) -> Option<Kind> {
        Self::WEIGHTS
            .iter()
            .map(|(k, _)| *k)
            .find(|k| k.name() == name)
    }

    pub(crate) fn real_claude(self) -> bool {
        matches!(
            self,
            Kind::ClaudeKill
                | Kind::Http500
                | Kind::Http529
                | Kind::Http429
                | Kind::ServerDrop
                | Kind::ServerStall
        )
    }

    pub(crate) fn real_codex(self) -> bool {
        matches!(
            self,
            Kind::CodexKill | Kind::CodexHttp500 | Kind::CodexServerDrop
        )
    }

    /// The real agent the fault goes through, if any.
    pub(crate) fn real_agent(self) -> Option<&'static str> {
        if self.real_claude() {
            Some("claude")
        } else if self.real_codex() {
            Some("codex")
        } else {
            None
        }
    }

    /// Whether `ending` is an honest end for this fault.
    pub(crate) fn honest(self, ending: Ending, reason: Option<&str>) -> bool {
        let failed = matches!(ending, Ending::Incomplete | Ending::Error)
            && reason.is_some_and(|r| !r.trim().is_empty());
        match self {
            // The turn lost its agent, its model or its daemon: it cannot be a success.
            Kind::AgentKill
            | Kind::AgentHang
            | Kind::CutLine
            | Kind::ClaudeKill
            | Kind::Http500
            | Kind::Http529
            | Kind::Http429
            | Kind::ServerDrop
            | Kind::ServerStall
            | Kind::CodexKill
            | Kind::CodexHttp500
            | Kind::CodexServerDrop
            | Kind::DaemonKill => failed,
            // A bad line is skipped (with a note) or fails the turn; either is honest.
            Kind::HugeLine | Kind::BadUtf8 | Kind::Garbage | Kind::WrongId => {
                ending == Ending::Done || failed
            }
            // A client going away ends no turn.
            Kind::ClientDrop | Kind::CliKill => ending == Ending::Done,
            // Judged against the store in `disk`.
            Kind::DiskFull | Kind::ReadonlyHome => ending == Ending::Done || failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_parses_back_from_its_name() {
        for (k, _) in Kind::WEIGHTS {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
    }
}
