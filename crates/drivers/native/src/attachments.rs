//! A prompt's attachments as the native agent's first user message: images as image
//! blocks, other files named by path for the agent's own file tools (`read`, `grep`
//! read them better than a copy inlined into the prompt would, and a large log stays
//! out of the context until asked for).
//!
//! Images are fitted by `weft-attachments` to the strictest of the vendors' limits, not to
//! the current endpoint's: the block is stored in the session's conversation and
//! replayed on every later request, and a session may move to another provider
//! (`providers.json` offers several); an image one provider took must not make the
//! next one refuse the whole conversation. The difference is small (1568 px on the long
//! side instead of 2048 or 3072; OpenAI and Gemini tile far below either).

use std::path::PathBuf;

use weft_attachments::ImageLimits;

use crate::conversation::{Block, Message, Origin, Role};

/// What every protocol the native agent speaks takes.
pub const LIMITS: ImageLimits = weft_attachments::CLAUDE
    .within(weft_attachments::OPENAI)
    .within(weft_attachments::GEMINI);

/// The user message of a turn: `prompt`, the non-image files listed after it, then one
/// image block per attached image. An image that cannot be read or fitted fails the
/// turn with the file's name (the kernel already refused files that are not images).
pub fn user_message(prompt: &str, attachments: &[PathBuf]) -> Result<Message, String> {
    let (images, files): (Vec<&PathBuf>, Vec<&PathBuf>) = attachments
        .iter()
        .partition(|p| weft_attachments::looks_like_image(p));
    let mut text = prompt.to_string();
    if !files.is_empty() {
        text.push_str("\n\nAttached files:");
        for f in &files {
            text.push_str(&format!("\n- {}", f.display()));
        }
    }
    let mut blocks = vec![Block::Text { text }];
    for path in images {
        let img = weft_attachments::prepare_image(path, LIMITS).map_err(|e| e.to_string())?;
        blocks.push(Block::Image {
            media_type: img.mime.to_string(),
            data: img.base64(),
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            width: img.width,
            height: img.height,
        });
    }
    Ok(Message {
        role: Role::User,
        blocks,
        origin: Origin::Normal,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_and_without_attachments_the_prompt_is_plain() {
        let m = user_message("look", &[]).unwrap();
        assert_eq!(m, Message::user("look"));
        let m = user_message("look", &["/w/notes.md".into()]).unwrap();
        assert_eq!(m.text(), "look\n\nAttached files:\n- /w/notes.md");
        assert_eq!(m.blocks.len(), 1);
    }

    #[test]
    fn an_image_becomes_a_block_fitted_to_every_vendor() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("wide.png");
        image::RgbImage::from_fn(2400, 800, |x, y| {
            image::Rgb([(x % 251) as u8, (y % 241) as u8, 9])
        })
        .save(&big)
        .unwrap();
        let m = user_message("what is it?", &[big]).unwrap();
        assert_eq!(m.text(), "what is it?", "an image is not listed as a file");
        match &m.blocks[1] {
            Block::Image {
                media_type,
                name,
                width,
                height,
                data,
            } => {
                assert_eq!(media_type, "image/jpeg");
                assert_eq!(name, "wide.png");
                assert_eq!((*width, *height), (1568, 523));
                assert!(data.len() <= LIMITS.max_bytes * 4 / 3 + 4);
            }
            other => panic!("{other:?}"),
        }
        assert!(m.approx_tokens() > 1000, "{}", m.approx_tokens());
        let placeholder = m.images_as_text();
        assert_eq!(placeholder.text(), "what is it?\n[image: wide.png]");
    }

    #[test]
    fn an_image_that_is_not_one_fails_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fake.png");
        std::fs::write(&fake, "not pixels").unwrap();
        let e = user_message("look", &[fake]).unwrap_err();
        assert!(e.contains("fake.png is not an image"), "{e}");
    }
}
