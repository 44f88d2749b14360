mod anthropic;
mod gemini;
mod openai;
