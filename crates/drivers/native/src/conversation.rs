//! The conversation in Weft's own terms, independent of any wire format: what is
//! persisted, resumed and replayed to whichever model protocol runs the next step.
//!
//! Opaque reasoning (Anthropic thinking signatures, Gemini thought signatures,
//! Responses encrypted reasoning) carries the `origin` of the client that produced it
//! and is sent back only to that same origin: another provider would reject it, or
//! worse, be shown another vendor's private state.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The key the stream parsers keep a call's arguments under when they were not a JSON
/// object. A model can send the key itself, so its presence alone proves nothing: see
/// [`raw_arguments`] for the marker and [`crate::tools::unusable_args`] for the guard.
pub const RAW_KEY: &str = "_raw";

/// The text of arguments that were not a JSON object, when `input` is the parsers'
/// marker (exactly `{"_raw": text}`); None for every other input, even one that
/// carries a `_raw` key of its own.
pub fn raw_arguments(input: &Value) -> Option<&str> {
    match input.as_object() {
        Some(m) if m.len() == 1 => m.get(RAW_KEY)?.as_str(),
        _ => None,
    }
}

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user, a steer, tool results, a compaction summary.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning, with the opaque proof its provider wants back.
    Reasoning {
        /// The visible reasoning (may be empty for redacted or encrypted reasoning).
        text: String,
        /// The provider's signature or encrypted payload, replayed verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Anthropic's `redacted_thinking` data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<String>,
        /// Which client produced it (protocol and endpoint).
        origin: String,
    },
    /// A tool call the model made.
    ToolUse {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// Its arguments (a JSON object; `{"_raw": "…"}` ([`RAW_KEY`]) when the model
        /// sent text that is not JSON, so the error can be reported and the call still
        /// replayed).
        input: Value,
        /// Gemini's thought signature on this call, with its origin.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<(String, String)>,
    },
    /// An image the user attached, kept as the model is sent it (already fitted to
    /// every protocol's limits, so a stored conversation replays to any provider).
    Image {
        /// Its MIME type (`image/png`, `image/jpeg`, …).
        media_type: String,
        /// The encoded image, base64.
        data: String,
        /// The attached file's name, for text-only renderings (`[image: shot.png]`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        name: String,
        /// Width in pixels (0: unknown), for token estimates.
        #[serde(default)]
        width: u32,
        /// Height in pixels (0: unknown).
        #[serde(default)]
        height: u32,
    },
    /// What a tool call returned.
    ToolResult {
        /// The call id it answers.
        id: String,
        /// The tool's name (Gemini pairs results by name).
        #[serde(default)]
        name: String,
        /// The result text.
        content: String,
        /// True when the call failed or was refused.
        is_error: bool,
    },
}

impl Block {
    /// How an image reads where only text goes: `[image: shot.png]`.
    pub fn image_placeholder(name: &str) -> String {
        if name.is_empty() {
            "[image]".into()
        } else {
            format!("[image: {name}]")
        }
    }

    /// A rough size in tokens. An image costs what the vendors charge for one fitted
    /// to their limits (Anthropic: width × height / 750, which OpenAI's and Gemini's
    /// tiling come close to), at least a small tile's worth; unknown sizes count as a
    /// full-size image.
    pub fn approx_tokens(&self) -> u64 {
        let bytes = match self {
            Block::Text { text } => text.len(),
            Block::Reasoning { text, .. } => text.len(),
            Block::ToolUse { input, .. } => input.to_string().len(),
            Block::ToolResult { content, .. } => content.len(),
            Block::Image { width, height, .. } => {
                let pixels = u64::from(*width) * u64::from(*height);
                return if pixels == 0 {
                    IMAGE_TOKENS_MAX
                } else {
                    (pixels / 750).clamp(IMAGE_TOKENS_MIN, IMAGE_TOKENS_MAX)
                };
            }
        };
        (bytes / 4) as u64
    }
}

/// Token estimate bounds for one image (Anthropic's ~1.15 megapixel cap; OpenAI's
/// low-detail price).
const IMAGE_TOKENS_MAX: u64 = 1600;
const IMAGE_TOKENS_MIN: u64 = 85;

/// Why a message is in the conversation, when not simply said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Said by the user or the model in the normal course.
    #[default]
    Normal,
    /// A steer injected at a step boundary.
    Steer,
    /// The summary that replaced older messages.
    Summary,
    /// Feedback from the pack's verify step.
    Verify,
}

/// One message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub blocks: Vec<Block>,
    /// Why it is here.
    #[serde(default, skip_serializing_if = "is_normal")]
    pub origin: Origin,
}

fn is_normal(o: &Origin) -> bool {
    *o == Origin::Normal
}

impl Message {
    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            blocks: vec![Block::Text { text: text.into() }],
            origin: Origin::Normal,
        }
    }

    /// The same message, marked with `origin`.
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    /// The text blocks, joined.
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The tool calls in it.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolUse {
                id, name, input, ..
            } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }

    /// The same message with each image replaced by its text placeholder, for
    /// requests that must stay small and text-only (a compaction's summary request).
    pub fn images_as_text(&self) -> Self {
        let blocks = self
            .blocks
            .iter()
            .map(|b| match b {
                Block::Image { name, .. } => Block::Text {
                    text: Block::image_placeholder(name),
                },
                other => other.clone(),
            })
            .collect();
        Self {
            role: self.role,
            blocks,
            origin: self.origin,
        }
    }

    /// A rough size in tokens (4 bytes a token of text, images by their pixels), for
    /// when no provider figure exists.
    pub fn approx_tokens(&self) -> u64 {
        self.blocks.iter().map(Block::approx_tokens).sum::<u64>() + 4
    }
}
