//! Scripted model servers for Weft's tests: a dev-dependency only.
//!
//! Each agent CLI Weft drives talks to a model vendor's HTTP API. Pointing the real
//! binary at one of these servers on loopback (port 0, so tests run in parallel) turns
//! the model into a script: a test lists the replies, the agent runs for real, and the
//! recorder shows every request the agent sent.
//!
//! The shape follows codex's `core/tests/common/responses.rs`: event builders, turns
//! built from them, a recorder. [`server`] is the vendor-neutral core (HTTP/1.1, SSE
//! bodies with delays and dropped connections, the recorder, injected shutdown); one
//! module per vendor turns that vendor's events into reply bodies. Today:
//! [`anthropic`] (the Messages API Claude Code uses), [`openai`] (the Responses API
//! codex uses), [`chat`] (OpenAI Chat Completions, the wire of every
//! "OpenAI-compatible base URL") and [`gemini`], each reusing
//! [`server::ScriptedServer`], [`server::Reply`] and [`server::Recorder`], and one
//! [`playbook::Script`] that picks each reply. A behaviour every wire shares is
//! scripted once in [`script`] (one `Script`, `Turn` and `when`) and served in each
//! vendor's format by [`script::ModelServer`].
//!
//! Hazards worth knowing:
//! - An agent retries a 500 or a dropped connection (Claude Code up to 10 times with
//!   backoff unless `CLAUDE_CODE_MAX_RETRIES` says otherwise): each retry is a request
//!   and consumes the next scripted turn.
//! - Agents make requests besides the main loop (titles, token counts). Scripts match
//!   on request content ([`anthropic::when`]) and fall back to a default reply, so an
//!   extra request never steals a turn meant for the main loop.

pub mod anthropic;
pub mod chat;
pub mod claude_code;
pub mod conformance;
pub mod gemini;
pub mod leaks;
pub mod openai;
pub mod playbook;
pub mod script;
pub mod served;
pub mod server;
pub mod sink;
mod stream;

pub use anthropic::{AnthropicServer, MessagesRequest, Script, Turn};
pub use chat::{ChatRequest, ChatServer};
pub use gemini::{GeminiServer, GenerateRequest};
pub use openai::{ResponsesRequest, ResponsesServer};
pub use server::{RecordedRequest, Recorder, Reply, ScriptedServer, Step};
