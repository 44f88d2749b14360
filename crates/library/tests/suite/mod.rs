mod fork;
mod index;
mod records;
mod search;

use weft_library::Agent;

/// The readers the daemon hands the library (the registry's list).
pub(crate) fn agents() -> Vec<Agent> {
    vec![
        Agent::new(weft_claude::native_sessions::ClaudeSessions),
        Agent::new(weft_codex::native_sessions::CodexSessions),
        Agent::new(weft_gemini::native_sessions::GeminiSessions),
    ]
}

/// The reader of `id`'s sessions.
pub(crate) fn agent(id: &str) -> Agent {
    agents()
        .into_iter()
        .find(|a| a.id() == id)
        .unwrap_or_else(|| panic!("no reader for {id}"))
}
