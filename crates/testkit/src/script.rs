//! One scripted model, written once and served in any vendor's wire format.
//!
//! A test that checks behaviour every protocol shares (a reply streamed in chunks, a
//! tool call and its result, a stall) writes one [`Script`] of [`Turn`]s guarded by
//! [`when`] predicates, then serves it with [`ModelServer::start`] for each
//! [`Protocol`]. The script is lowered onto the vendor's own script and turn builders,
//! so each server still sends the bytes it always sent: the vendor modules stay the
//! only encoders, and a vendor-only detail (Anthropic cache figures, a Codex patch
//! tool, Gemini's JSON-mode side requests) stays in that vendor's module.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::playbook::Playbook;
use crate::stream::owned;
use crate::{anthropic, chat, gemini, openai};

/// What every vendor's request can answer, for predicates written once.
pub trait ModelRequest {
    /// The model asked for.
    fn model(&self) -> &str;
    /// Text of the latest user message.
    fn last_user_text(&self) -> String;
    /// All text of the conversation sent, tool results included.
    fn all_text(&self) -> String;
    /// Names of the tools offered.
    fn tool_names(&self) -> Vec<String>;
    /// The result the agent sent for tool call `call_id`, as text (where a vendor's
    /// request carries it: Anthropic's and Gemini's in the newest message, the
    /// OpenAI wires' anywhere in the conversation).
    fn tool_result(&self, call_id: &str) -> Option<String>;
}

/// A predicate over any vendor's request.
pub type Matcher = Arc<dyn Fn(&dyn ModelRequest) -> bool + Send + Sync>;

/// Ready-made predicates.
pub mod when {
    use super::{Matcher, ModelRequest};
    use std::sync::Arc;

    /// The latest user text contains `needle`.
    pub fn user_text_contains(needle: &str) -> Matcher {
        let needle = needle.to_string();
        Arc::new(move |r: &dyn ModelRequest| r.last_user_text().contains(&needle))
    }

    /// Any text of the conversation (every role, tool results) contains `needle`.
    pub fn any_text_contains(needle: &str) -> Matcher {
        let needle = needle.to_string();
        Arc::new(move |r: &dyn ModelRequest| r.all_text().contains(&needle))
    }

    /// The model asked for contains `needle`.
    pub fn model_contains(needle: &str) -> Matcher {
        let needle = needle.to_string();
        Arc::new(move |r: &dyn ModelRequest| r.model().contains(&needle))
    }

    /// The request carries the result of tool call `call_id`.
    pub fn tool_result_for(call_id: &str) -> Matcher {
        let id = call_id.to_string();
        Arc::new(move |r: &dyn ModelRequest| r.tool_result(&id).is_some())
    }

    /// The result of tool call `call_id` contains `needle`.
    pub fn tool_result_contains(call_id: &str, needle: &str) -> Matcher {
        let (id, needle) = (call_id.to_string(), needle.to_string());
        Arc::new(move |r: &dyn ModelRequest| {
            r.tool_result(&id).is_some_and(|t| t.contains(&needle))
        })
    }

    /// The request offers no tools (titles and other side calls).
    pub fn no_tools() -> Matcher {
        Arc::new(|r: &dyn ModelRequest| r.tool_names().is_empty())
    }

    /// Any custom predicate.
    pub fn custom(f: impl Fn(&dyn ModelRequest) -> bool + Send + Sync + 'static) -> Matcher {
        Arc::new(f)
    }
}

#[derive(Debug, Clone)]
enum Start {
    Reply,
    Status(u16),
    Dropped,
}

#[derive(Debug, Clone)]
enum Op {
    Text(Vec<String>),
    Thinking(Vec<String>),
    ToolCall {
        id: String,
        name: String,
        args: Value,
    },
    Delay(Duration),
    DeltaDelay(Duration),
    Drop,
    Hang,
    Usage(u64, u64),
}

/// One scripted model reply, in no vendor's terms: the builder calls are replayed, in
/// order, on the vendor's own turn builder.
#[derive(Debug, Clone)]
pub struct Turn {
    start: Start,
    ops: Vec<Op>,
}

impl Default for Turn {
    fn default() -> Self {
        Self::new()
    }
}

impl Turn {
    /// An empty reply.
    pub fn new() -> Self {
        Self {
            start: Start::Reply,
            ops: Vec::new(),
        }
    }

    /// A reply of one text, streamed as one delta.
    pub fn text_reply(text: &str) -> Self {
        Self::new().text(text)
    }

    /// An HTTP error status with the vendor's error body.
    pub fn status(code: u16) -> Self {
        Self {
            start: Start::Status(code),
            ops: Vec::new(),
        }
    }

    /// The connection is cut right after the headers.
    pub fn dropped() -> Self {
        Self {
            start: Start::Dropped,
            ops: Vec::new(),
        }
    }

    fn op(mut self, op: Op) -> Self {
        self.ops.push(op);
        self
    }

    /// Appends text streamed as one delta.
    pub fn text(self, text: &str) -> Self {
        self.text_chunks(&[text])
    }

    /// Appends text streamed as these deltas.
    pub fn text_chunks(self, chunks: &[&str]) -> Self {
        self.op(Op::Text(owned(chunks)))
    }

    /// Appends reasoning (Anthropic thinking, OpenAI reasoning, Gemini thought)
    /// streamed as one delta.
    pub fn thinking(self, text: &str) -> Self {
        self.thinking_chunks(&[text])
    }

    /// Appends reasoning streamed as these deltas.
    pub fn thinking_chunks(self, chunks: &[&str]) -> Self {
        self.op(Op::Thinking(owned(chunks)))
    }

    /// Appends a call of tool `name` with these arguments, identified by `id`.
    pub fn tool_call(self, id: &str, name: &str, args: Value) -> Self {
        self.op(Op::ToolCall {
            id: id.into(),
            name: name.into(),
            args,
        })
    }

    /// Pauses here.
    pub fn delay(self, d: Duration) -> Self {
        self.op(Op::Delay(d))
    }

    /// Pauses before every delta (Gemini: every chunk).
    pub fn delta_delay(self, d: Duration) -> Self {
        self.op(Op::DeltaDelay(d))
    }

    /// Cuts the connection here.
    pub fn then_drop(self) -> Self {
        self.op(Op::Drop)
    }

    /// Stops sending here and never finishes (a stalled model).
    pub fn then_hang(self) -> Self {
        self.op(Op::Hang)
    }

    /// Input and output token figures reported.
    pub fn usage(self, input: u64, output: u64) -> Self {
        self.op(Op::Usage(input, output))
    }

    pub(crate) fn encode<T: Encode>(&self) -> T {
        let start = match self.start {
            Start::Reply => T::reply(),
            Start::Status(code) => T::status(code),
            Start::Dropped => T::dropped(),
        };
        self.ops.iter().fold(start, |t, op| match op {
            Op::Text(c) => t.text_chunks(&borrowed(c)),
            Op::Thinking(c) => t.thinking_chunks(&borrowed(c)),
            Op::ToolCall { id, name, args } => t.tool_call(id, name, args.clone()),
            Op::Delay(d) => t.delay(*d),
            Op::DeltaDelay(d) => t.delta_delay(*d),
            Op::Drop => t.then_drop(),
            Op::Hang => t.then_hang(),
            Op::Usage(i, o) => t.usage(*i, *o),
        })
    }
}

fn borrowed(chunks: &[String]) -> Vec<&str> {
    chunks.iter().map(String::as_str).collect()
}

/// A vendor's turn builder, as a neutral [`Turn`] drives it.
pub(crate) trait Encode: Sized {
    fn reply() -> Self;
    fn status(code: u16) -> Self;
    fn dropped() -> Self;
    fn text_chunks(self, chunks: &[&str]) -> Self;
    fn thinking_chunks(self, chunks: &[&str]) -> Self;
    fn tool_call(self, id: &str, name: &str, args: Value) -> Self;
    fn delay(self, d: Duration) -> Self;
    fn delta_delay(self, d: Duration) -> Self;
    fn then_drop(self) -> Self;
    fn then_hang(self) -> Self;
    fn usage(self, input: u64, output: u64) -> Self;
}

enum Entry {
    Queue(Option<Matcher>, Turn),
    Rule(Matcher, Turn, Option<usize>),
    Default(Turn),
}

/// The model's replies in no vendor's terms, with the same order of choice as every
/// vendor's script: a rule that takes the request, then the next queued turn if it
/// fits, then the default reply (`Turn::text_reply("ok")` unless set).
#[derive(Default)]
pub struct Script {
    entries: Vec<Entry>,
}

impl Script {
    /// No turns; every request gets the default reply.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `turn` for the next request no rule takes.
    pub fn turn(mut self, turn: Turn) -> Self {
        self.entries.push(Entry::Queue(None, turn));
        self
    }

    /// Queues `turn`, served only to a request `when` takes.
    pub fn turn_when(mut self, when: Matcher, turn: Turn) -> Self {
        self.entries.push(Entry::Queue(Some(when), turn));
        self
    }

    /// Answers every request `when` takes with `turn`, before the queue.
    pub fn rule(mut self, when: Matcher, turn: Turn) -> Self {
        self.entries.push(Entry::Rule(when, turn, None));
        self
    }

    /// Answers the next `times` requests `when` takes with `turn`, before the queue.
    pub fn rule_times(mut self, when: Matcher, turn: Turn, times: usize) -> Self {
        self.entries.push(Entry::Rule(when, turn, Some(times)));
        self
    }

    /// The reply when nothing else applies.
    pub fn default_reply(mut self, turn: Turn) -> Self {
        self.entries.push(Entry::Default(turn));
        self
    }

    /// Replays this script onto a vendor's playbook.
    pub(crate) fn lower<Req, T>(self, book: &mut Playbook<Req, T>)
    where
        Req: ModelRequest + 'static,
        T: Encode + Clone,
    {
        for entry in self.entries {
            match entry {
                Entry::Queue(when, turn) => book.queue(when.map(typed), turn.encode()),
                Entry::Rule(when, turn, times) => book.rule(typed(when), turn.encode(), times),
                Entry::Default(turn) => book.set_default(turn.encode()),
            }
        }
    }
}

/// The wire formats the scripted servers speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Anthropic Messages ([`anthropic`]).
    Anthropic,
    /// OpenAI Chat Completions ([`chat`]).
    Chat,
    /// OpenAI Responses ([`openai`]).
    Responses,
    /// Gemini `generateContent` ([`gemini`]).
    Gemini,
}

impl Protocol {
    /// Every protocol.
    pub const ALL: [Protocol; 4] = [
        Protocol::Anthropic,
        Protocol::Chat,
        Protocol::Responses,
        Protocol::Gemini,
    ];
}

/// A scripted server of any [`Protocol`].
pub enum ModelServer {
    /// Anthropic Messages.
    Anthropic(anthropic::AnthropicServer),
    /// OpenAI Chat Completions.
    Chat(chat::ChatServer),
    /// OpenAI Responses.
    Responses(openai::ResponsesServer),
    /// Gemini.
    Gemini(gemini::GeminiServer),
}

impl ModelServer {
    /// Serves `script` in `protocol`'s wire format on 127.0.0.1, a free port.
    pub async fn start(protocol: Protocol, script: Script) -> io::Result<Self> {
        Ok(match protocol {
            Protocol::Anthropic => {
                Self::Anthropic(anthropic::AnthropicServer::start(script).await?)
            }
            Protocol::Chat => Self::Chat(chat::ChatServer::start(script).await?),
            Protocol::Responses => Self::Responses(openai::ResponsesServer::start(script).await?),
            Protocol::Gemini => Self::Gemini(gemini::GeminiServer::start(script).await?),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        match self {
            Self::Anthropic(s) => s.base_url(),
            Self::Chat(s) => s.base_url(),
            Self::Responses(s) => s.base_url(),
            Self::Gemini(s) => s.base_url(),
        }
    }

    /// The text of every main-loop request so far (Gemini's JSON-mode side requests
    /// left out), in order.
    pub fn request_texts(&self) -> Vec<String> {
        match self {
            Self::Anthropic(s) => s.request_texts(),
            Self::Chat(s) => s.request_texts(),
            Self::Responses(s) => s.request_texts(),
            Self::Gemini(s) => s.request_texts(),
        }
    }
}

/// Teaches a vendor module's `Turn` and `Script` the neutral ones: `$turn`'s own
/// builders named here encode each step (invoked inside the vendor module, which owns
/// the `book` field).
macro_rules! lower_into {
    ($turn:ident, $script:ident, thinking: $thinking:ident, tool_call: $tool:ident, delta_delay: $delta:ident) => {
        impl $crate::script::Encode for $turn {
            fn reply() -> Self {
                $turn::new()
            }
            fn status(code: u16) -> Self {
                $turn::status(code)
            }
            fn dropped() -> Self {
                $turn::dropped()
            }
            fn text_chunks(self, chunks: &[&str]) -> Self {
                $turn::text_chunks(self, chunks)
            }
            fn thinking_chunks(self, chunks: &[&str]) -> Self {
                $turn::$thinking(self, chunks)
            }
            fn tool_call(self, id: &str, name: &str, args: serde_json::Value) -> Self {
                $turn::$tool(self, id, name, args)
            }
            fn delay(self, d: std::time::Duration) -> Self {
                $turn::delay(self, d)
            }
            fn delta_delay(self, d: std::time::Duration) -> Self {
                $turn::$delta(self, d)
            }
            fn then_drop(self) -> Self {
                $turn::then_drop(self)
            }
            fn then_hang(self) -> Self {
                $turn::then_hang(self)
            }
            fn usage(self, input: u64, output: u64) -> Self {
                $turn::usage(self, input, output)
            }
        }

        impl From<$crate::script::Turn> for $turn {
            fn from(turn: $crate::script::Turn) -> Self {
                turn.encode()
            }
        }

        impl From<$crate::script::Script> for $script {
            fn from(script: $crate::script::Script) -> Self {
                let mut out = $script::new();
                script.lower(&mut out.book);
                out
            }
        }
    };
}
pub(crate) use lower_into;

/// A vendor module's `Matcher` and `when` module: each listed function is the neutral
/// predicate of that name (after `=>`), typed for `$req`; the block adds the vendor's
/// own matchers.
macro_rules! vendor_when {
    ($req:ident; $( $(#[$doc:meta])* $name:ident($($arg:ident),*) => $neutral:ident; )* { $($extra:item)* }) => {
        /// A predicate over a request of this wire.
        pub type Matcher = std::sync::Arc<dyn Fn(&$req) -> bool + Send + Sync>;

        /// Ready-made matchers.
        pub mod when {
            use super::{Matcher, $req};
            use std::sync::Arc;

            $(
                $(#[$doc])*
                pub fn $name($($arg: &str),*) -> Matcher {
                    $crate::script::typed($crate::script::when::$neutral($($arg),*))
                }
            )*

            $($extra)*

            /// Any custom predicate.
            pub fn custom(f: impl Fn(&$req) -> bool + Send + Sync + 'static) -> Matcher {
                Arc::new(f)
            }
        }
    };
}
pub(crate) use vendor_when;

/// Answers [`ModelRequest`] with a vendor request's own helpers of the same names, and
/// `$tool_result` for [`ModelRequest::tool_result`].
macro_rules! model_request_by_helpers {
    ($req:ident, tool_result: $tool_result:ident) => {
        impl $crate::script::ModelRequest for $req {
            fn model(&self) -> &str {
                $req::model(self)
            }
            fn last_user_text(&self) -> String {
                $req::last_user_text(self)
            }
            fn all_text(&self) -> String {
                $req::all_text(self)
            }
            fn tool_names(&self) -> Vec<String> {
                $req::tool_names(self)
            }
            fn tool_result(&self, call_id: &str) -> Option<String> {
                $req::$tool_result(self, call_id)
            }
        }
    };
}
pub(crate) use model_request_by_helpers;

/// A neutral predicate as one vendor's (the vendors' `when` modules are these).
pub(crate) fn typed<Req: ModelRequest + 'static>(m: Matcher) -> crate::playbook::Pred<Req> {
    Arc::new(move |r: &Req| m(r))
}
