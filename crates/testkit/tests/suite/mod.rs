mod anthropic;
mod chat;
mod gemini;
mod http;
mod openai;
mod script;
