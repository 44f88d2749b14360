mod codex;
mod gemini;
