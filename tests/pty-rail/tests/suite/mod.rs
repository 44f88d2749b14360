mod codex;
mod codex_fork;
mod gemini;
