//! A scripted Gemini API (generativelanguage `v1beta`), as the Gemini CLI calls it with
//! `GOOGLE_GEMINI_BASE_URL` pointing here:
//! `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (SSE),
//! `POST /v1beta/models/<model>:generateContent` (one JSON response) and
//! `POST /v1beta/models/<model>:countTokens`.
//!
//! A [`Script`] holds the replies. Each generate request is answered by, in order:
//! 1. for a JSON-mode request (a `responseJsonSchema`/`responseSchema` in its
//!    generation config: the CLI's model router, next-speaker checks, titles), an
//!    object filled from that schema ([`json_for_schema`]): side requests never take a
//!    rule or a queued turn (the router's request quotes the user's prompt, so a rule
//!    for that prompt would match it, and the CLI retries a reply that is not the JSON
//!    it asked for with backoff: about 75 s before the turn goes on);
//! 2. the first [`Script::rule`] whose matcher takes the request;
//! 3. the next queued [`Script::turn`], if its own guard (if any) takes the request;
//! 4. the default reply (`Turn::text_reply("ok")` unless [`Script::default_reply`]).
//!
//! The CLI retries a 500 and a dropped stream; each retry is a request and takes the
//! next turn.

mod events;

use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Map, Value};

pub use events::*;

use crate::served::{choose, items, ScriptOf, Served, Wire};
use crate::server::{RecordedRequest, Reply};

crate::script::vendor_when! { GenerateRequest;
    /// The latest user turn's text contains `needle`.
    user_text_contains(needle) => user_text_contains;
    /// Any text anywhere in `contents` (function responses included) contains `needle`.
    any_text_contains(needle) => any_text_contains;
    /// The model in the path contains `needle`.
    model_contains(needle) => model_contains;
    {
        /// The last content carries a functionResponse for a call named `name`.
        pub fn function_response_for(name: &str) -> Matcher {
            let name = name.to_string();
            Arc::new(move |r: &GenerateRequest| r.last_function_response(&name).is_some())
        }
    }
}

/// A `:generateContent` or `:streamGenerateContent` request.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// The model named in the path.
    pub model: String,
    /// True for `:streamGenerateContent`.
    pub stream: bool,
    /// The body as sent.
    pub body: Value,
}

impl GenerateRequest {
    /// The `contents` array.
    pub fn contents(&self) -> &[Value] {
        items(&self.body["contents"])
    }

    /// Names of the function declarations offered.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for tool in self.body["tools"].as_array().into_iter().flatten() {
            for f in tool["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let Some(n) = f["name"].as_str() {
                    names.push(n.to_string());
                }
            }
        }
        names
    }

    /// The JSON schema asked for, when the request is in JSON mode.
    pub fn response_schema(&self) -> Option<&Value> {
        let cfg = &self.body["generationConfig"];
        ["responseJsonSchema", "responseSchema"]
            .iter()
            .map(|k| &cfg[*k])
            .find(|v| v.is_object())
    }

    /// Text parts of the last `user` content that has any (joined by newlines).
    pub fn last_user_text(&self) -> String {
        self.contents()
            .iter()
            .rev()
            .filter(|c| c["role"] == "user")
            .map(parts_text)
            .find(|t| !t.is_empty())
            .unwrap_or_default()
    }

    /// Every text part and function response in `contents`, joined by newlines.
    pub fn all_text(&self) -> String {
        self.contents()
            .iter()
            .map(|c| {
                let mut t = parts_text(c);
                for p in c["parts"].as_array().into_iter().flatten() {
                    if let Some(r) = p.get("functionResponse") {
                        t.push('\n');
                        t.push_str(&r["response"].to_string());
                    }
                }
                t
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The `response` of the functionResponse for `name` in the last content.
    pub fn last_function_response(&self, name: &str) -> Option<Value> {
        let last = self.contents().last()?;
        last["parts"].as_array()?.iter().find_map(|p| {
            let r = p.get("functionResponse")?;
            (r["name"] == name).then(|| r["response"].clone())
        })
    }
}

fn parts_text(content: &Value) -> String {
    content["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p["thought"] != true)
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// An object satisfying `schema` (OpenAPI or JSON-schema style): what a JSON-mode side
/// request gets. Known fields get answers that keep the CLI on its main path
/// (`complexity_score` low, `next_speaker` the user); others get plain values.
pub fn json_for_schema(schema: &Value) -> Value {
    let kind = schema["type"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase();
    match kind.as_str() {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (k, v) in props {
                    let value = match k.as_str() {
                        "complexity_score" => json!(10),
                        "complexity_reasoning" => json!("simple request"),
                        "next_speaker" => json!("user"),
                        "model_choice" => json!("flash"),
                        _ => json_for_schema(v),
                    };
                    out.insert(k.clone(), value);
                }
            }
            Value::Object(out)
        }
        "array" => json!([]),
        "integer" | "number" => json!(1),
        "boolean" => json!(false),
        _ => schema["enum"]
            .as_array()
            .and_then(|e| e.first().cloned())
            .unwrap_or_else(|| json!("ok")),
    }
}

/// The model's replies, in order, with rules for requests outside the order.
pub type Script = ScriptOf<Generate>;

/// What a Gemini script keeps besides its turns.
#[derive(Debug, Default)]
pub struct Extra {
    token_count: Option<u64>,
}

impl crate::playbook::Extra<GenerateRequest, Turn> for Extra {
    /// A JSON-mode side request gets an object filled from its schema, never a rule's
    /// reply or a queued turn.
    fn side_reply(&self, req: &GenerateRequest) -> Option<Turn> {
        let schema = req.response_schema()?;
        Some(Turn::text_reply(&json_for_schema(schema).to_string()))
    }
}

impl Script {
    /// What `:countTokens` answers (default: a quarter of the body's bytes).
    pub fn token_count(mut self, n: u64) -> Self {
        self.extra.token_count = Some(n);
        self
    }
}

/// `/v1beta/models/<model>:<method>` → (model, method).
fn parse_route(route: &str) -> Option<(&str, &str)> {
    let rest = route
        .strip_prefix("/v1beta/models/")
        .or_else(|| route.strip_prefix("/v1/models/"))?;
    rest.rsplit_once(':')
}

/// The Gemini `generateContent` wire.
pub struct Generate;

impl Wire for Generate {
    type Request = GenerateRequest;
    type Turn = Turn;
    type Extra = Extra;

    fn is_main(r: &GenerateRequest) -> bool {
        r.response_schema().is_none()
    }

    fn request(r: &RecordedRequest) -> Option<GenerateRequest> {
        let (model, method) = parse_route(r.route())?;
        let stream = match method {
            "streamGenerateContent" => true,
            "generateContent" => false,
            _ => return None,
        };
        Some(GenerateRequest {
            model: model.to_string(),
            stream,
            body: r.body.clone(),
        })
    }

    fn respond(script: &Mutex<Script>, request: &RecordedRequest) -> Reply {
        if request.method != "POST" {
            return Reply::json(404, &error_body(404, "no such route"));
        }
        let Some((_, method)) = parse_route(request.route()) else {
            return Reply::json(404, &error_body(404, "no such route"));
        };
        if method == "countTokens" {
            let fixed = script.lock().extra.token_count;
            let n = fixed.unwrap_or_else(|| (request.raw.len() as u64 / 4).max(1));
            return Reply::json(200, &json!({ "totalTokens": n }));
        }
        let Some(req) = Self::request(request) else {
            return Reply::json(404, &error_body(404, "no such method"));
        };
        let (turn, _) = choose::<Self>(script, &req);
        turn.render(&req.model, req.stream)
    }
}

/// A running scripted Gemini server: its base URL is what `GOOGLE_GEMINI_BASE_URL`
/// should be.
pub type GeminiServer = Served<Generate>;

impl Served<Generate> {
    /// Every generate request that is not a JSON-mode side request, in order.
    pub fn main_requests(&self) -> Vec<GenerateRequest> {
        self.generate_requests()
            .into_iter()
            .filter(Generate::is_main)
            .collect()
    }

    /// Every generate request (streamed or not), in order.
    pub fn generate_requests(&self) -> Vec<GenerateRequest> {
        self.requests()
    }

    /// Waits until at least `n` main-loop requests arrived, or `timeout` passes.
    pub async fn wait_for_main(&self, n: usize, timeout: Duration) -> bool {
        self.wait_for_count(n, timeout, |r| {
            parse_route(r.route()).is_some_and(|(_, m)| m.contains("enerateContent"))
                && r.body["generationConfig"]["responseJsonSchema"].is_null()
                && r.body["generationConfig"]["responseSchema"].is_null()
        })
        .await
    }
}

impl crate::script::ModelRequest for GenerateRequest {
    fn model(&self) -> &str {
        &self.model
    }
    fn last_user_text(&self) -> String {
        GenerateRequest::last_user_text(self)
    }
    fn all_text(&self) -> String {
        GenerateRequest::all_text(self)
    }
    fn tool_names(&self) -> Vec<String> {
        GenerateRequest::tool_names(self)
    }
    /// The response in the newest content to call `call_id`: by its id, or, from an
    /// agent that sends none, by the name of the call with that id.
    fn tool_result(&self, call_id: &str) -> Option<String> {
        let name = self.contents().iter().find_map(|c| {
            c["parts"].as_array()?.iter().find_map(|p| {
                let call = p.get("functionCall")?;
                (call["id"] == call_id).then(|| call["name"].clone())
            })
        });
        let last = self.contents().last()?;
        last["parts"].as_array()?.iter().find_map(|p| {
            let r = p.get("functionResponse")?;
            let fits = match r.get("id") {
                Some(id) if !id.is_null() => id == call_id,
                _ => name.as_ref() == Some(&r["name"]),
            };
            fits.then(|| r["response"].to_string())
        })
    }
}

crate::script::lower_into!(Turn, Script, thinking: thought_chunks, tool_call: function_call_id, delta_delay: chunk_delay);
