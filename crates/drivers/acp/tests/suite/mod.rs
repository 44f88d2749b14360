mod chat_agents;
mod codex_acp;
mod conformance;
mod environment;
mod fake;
mod measure;
mod real;
mod replay;
pub mod support;
