mod anthropic;
mod gemini;
