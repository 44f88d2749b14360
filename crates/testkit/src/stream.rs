//! What every vendor's `Turn` shares: how the reply starts (a stream, an error status,
//! a cut connection), the pauses, raw frames, cuts and stalls between its items, and
//! the walk that turns them into SSE steps. Each vendor keeps its own item type and
//! encodes each item in its own wire format through the hook [`Body::stream`] calls.

use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;

use crate::server::{Reply, Step};

/// One piece of a scripted reply, in order.
#[derive(Debug, Clone)]
pub(crate) enum Part<I> {
    /// A vendor item (a text block, a tool call, …).
    Item(I),
    /// A pause.
    Delay(Duration),
    /// A frame sent as given.
    Raw(Value),
    /// The connection is cut here.
    Drop,
    /// Nothing more is sent, ever.
    Hang,
}

/// How a reply starts.
#[derive(Debug, Clone)]
pub(crate) enum Start {
    /// A 200 with the vendor's body.
    Reply,
    /// An error status with this JSON body.
    Status(u16, Value),
    /// The connection is cut right after the headers.
    DropAtOnce,
}

/// The vendor-neutral half of a turn.
#[derive(Debug, Clone)]
pub(crate) struct Body<I> {
    pub start: Start,
    pub parts: Vec<Part<I>>,
    /// A pause before every delta (a vendor decides which frames count as deltas).
    pub delta_delay: Option<Duration>,
}

impl<I> Default for Body<I> {
    fn default() -> Self {
        Self {
            start: Start::Reply,
            parts: Vec::new(),
            delta_delay: None,
        }
    }
}

impl<I> Body<I> {
    pub fn push(&mut self, part: Part<I>) {
        self.parts.push(part);
    }

    pub fn push_item(&mut self, item: I) {
        self.parts.push(Part::Item(item));
    }

    /// The reply when the turn is an error status or a cut, not a model reply.
    pub fn early_reply(&self) -> Option<Reply> {
        match &self.start {
            Start::Status(code, body) => Some(Reply::json(*code, body)),
            Start::DropAtOnce => Some(Reply::dropped()),
            Start::Reply => None,
        }
    }

    pub fn items(&self) -> impl Iterator<Item = &I> {
        self.parts.iter().filter_map(|p| match p {
            Part::Item(i) => Some(i),
            _ => None,
        })
    }

    /// Appends every part to `steps`, raw frames through `frame` and items through
    /// `item`. False when a cut or a stall ended the stream: the vendor's closing frames
    /// must then not follow.
    pub fn stream(
        &self,
        steps: &mut Vec<Step>,
        frame: fn(&Value) -> Step,
        mut item: impl FnMut(&I, &mut Vec<Step>),
    ) -> bool {
        for part in &self.parts {
            match part {
                Part::Item(i) => item(i, steps),
                Part::Delay(d) => steps.push(Step::Delay(*d)),
                Part::Raw(v) => steps.push(frame(v)),
                Part::Drop => {
                    steps.push(Step::Drop);
                    return false;
                }
                Part::Hang => {
                    steps.push(Step::Hang);
                    return false;
                }
            }
        }
        true
    }

    /// Appends one delta frame, after the delta pause if one is set.
    pub fn delta(&self, steps: &mut Vec<Step>, frame: Step) {
        if let Some(d) = self.delta_delay {
            steps.push(Step::Delay(d));
        }
        steps.push(frame);
    }
}

pub(crate) fn owned(chunks: &[&str]) -> Vec<String> {
    chunks.iter().map(|s| s.to_string()).collect()
}

/// One SSE frame: `event: <type>` and `data: <json>` (the wires that name their
/// events: Anthropic Messages, OpenAI Responses).
pub fn sse_named(event: &Value) -> Step {
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    Step::Bytes(Bytes::from(format!("event: {kind}\ndata: {event}\n\n")))
}

/// The builder methods every vendor's `Turn` has, over its `body: Body<$item>` field:
/// `$text` is the item variant holding text chunks, `$raw` and `$delta_delay` the
/// vendor's names for sending a raw frame and for the pause before every delta.
macro_rules! turn_builders {
    ($turn:ident, $item:ident :: $text:ident, raw: $raw:ident, delta_delay: $delta_delay:ident) => {
        impl Default for $turn {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $turn {
            /// A reply of one text, streamed as one delta.
            pub fn text_reply(text: &str) -> Self {
                Self::new().text(text)
            }

            /// An HTTP error status with this JSON body.
            pub fn status_body(code: u16, body: serde_json::Value) -> Self {
                let mut turn = Self::new();
                turn.body.start = $crate::stream::Start::Status(code, body);
                turn
            }

            /// The connection is cut right after the headers.
            pub fn dropped() -> Self {
                let mut turn = Self::new();
                turn.body.start = $crate::stream::Start::DropAtOnce;
                turn
            }

            /// Appends text streamed as one delta.
            pub fn text(self, text: &str) -> Self {
                self.text_chunks(&[text])
            }

            /// Appends text streamed as these deltas.
            pub fn text_chunks(mut self, chunks: &[&str]) -> Self {
                self.body
                    .push_item($item::$text($crate::stream::owned(chunks)));
                self
            }

            /// Pauses here (between items).
            pub fn delay(mut self, d: std::time::Duration) -> Self {
                self.body.push($crate::stream::Part::Delay(d));
                self
            }

            /// Pauses before every delta of the reply.
            pub fn $delta_delay(mut self, d: std::time::Duration) -> Self {
                self.body.delta_delay = Some(d);
                self
            }

            /// Sends this raw frame here.
            pub fn $raw(mut self, frame: serde_json::Value) -> Self {
                self.body.push($crate::stream::Part::Raw(frame));
                self
            }

            /// Cuts the connection here: nothing later is sent, not even the reply's end.
            pub fn then_drop(mut self) -> Self {
                self.body.push($crate::stream::Part::Drop);
                self
            }

            /// Stops sending here and never finishes (a stalled model).
            pub fn then_hang(mut self) -> Self {
                self.body.push($crate::stream::Part::Hang);
                self
            }
        }
    };
}
pub(crate) use turn_builders;
