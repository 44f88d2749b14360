mod anthropic;
mod chat;
mod gemini;
mod openai;
mod script;
