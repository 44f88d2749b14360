//! Files and images attached to a prompt: checked once when the prompt is accepted,
//! then fitted to what each agent's model takes by the driver that sends them.
//!
//! [`check`] is what every surface's prompt passes through: the path must be an
//! absolute regular file no larger than [`MAX_ATTACHMENT_BYTES`], and a file that
//! claims to be an image (by its extension or its first bytes) must decode as one, so
//! a broken screenshot is refused with its name instead of reaching a model as noise.
//!
//! [`prepare_image`] gives an agent its image within that vendor's [`ImageLimits`]:
//! an image already small enough in a format the vendor takes is sent byte for byte;
//! anything else is decoded, scaled down (aspect kept, Lanczos) and re-encoded (PNG
//! when it has transparency, JPEG otherwise), shrinking further until it fits the
//! byte limit. Decoding is bounded by [`image::Limits`] so a decompression bomb fails
//! instead of taking the daemon's memory.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use image::{DynamicImage, ImageFormat, ImageReader};

/// The largest attachment a prompt takes, in bytes.
pub const MAX_ATTACHMENT_BYTES: u64 = 32 * 1024 * 1024;

/// Decoded images larger than this many pixels per side are refused.
const MAX_DECODE_EDGE: u32 = 20_000;

/// The most memory decoding one image may take (256 MiB: 8192 x 8192 RGBA). A 32 MiB
/// file can claim a far larger picture; its decoding runs on a blocking thread, but
/// each one of them held up to 1 GiB.
pub const MAX_DECODED_BYTES: u64 = 256 * 1024 * 1024;

/// What is wrong with an attachment.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// A relative path (surfaces send absolute ones).
    #[error("attachment {0} is not an absolute path")]
    NotAbsolute(PathBuf),
    /// Missing or unreadable.
    #[error("attachment {path}: {why}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The OS's words.
        why: String,
    },
    /// A folder, a device, …
    #[error("attachment {0} is not a regular file")]
    NotAFile(PathBuf),
    /// Past [`MAX_ATTACHMENT_BYTES`].
    #[error("attachment {path} is {size} bytes; the limit is {limit} bytes ({} MiB)", limit / (1024 * 1024))]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Named or shaped like an image, but does not decode as one.
    #[error("attachment {path} is not an image: {why}")]
    NotAnImage {
        /// The file.
        path: PathBuf,
        /// The decoder's words.
        why: String,
    },
    /// Could not be fitted to the vendor's limits.
    #[error(
        "attachment {path}: could not fit the image to {max_edge}px / {max_bytes} bytes: {why}"
    )]
    CannotFit {
        /// The file.
        path: PathBuf,
        /// The edge limit.
        max_edge: u32,
        /// The byte limit.
        max_bytes: usize,
        /// Why.
        why: String,
    },
}

/// What an attachment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An image the agent's model can look at.
    Image {
        /// Its MIME type.
        mime: &'static str,
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
    /// Any other file, mentioned by path (or inlined as text).
    File,
}

/// A checked attachment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Image or file.
    pub kind: Kind,
}

impl Attachment {
    /// True for an image.
    pub fn is_image(&self) -> bool {
        matches!(self.kind, Kind::Image { .. })
    }
}

const IMAGE_EXTS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp", "bmp"];

fn has_image_ext(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTS.contains(&e.to_ascii_lowercase().as_str()))
}

fn unreadable(path: &Path, e: std::io::Error) -> AttachError {
    AttachError::Unreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    }
}

fn mime_of(format: ImageFormat) -> &'static str {
    format.to_mime_type()
}

fn reader_limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_DECODE_EDGE);
    limits.max_image_height = Some(MAX_DECODE_EDGE);
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    limits
}

/// Checks one attachment: an absolute regular file within the size limit, and a real
/// image when it looks like one.
pub fn check(path: &Path) -> Result<Attachment, AttachError> {
    if !path.is_absolute() {
        return Err(AttachError::NotAbsolute(path.to_path_buf()));
    }
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path, e))?;
    if !meta.is_file() {
        return Err(AttachError::NotAFile(path.to_path_buf()));
    }
    if meta.len() > MAX_ATTACHMENT_BYTES {
        return Err(AttachError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            limit: MAX_ATTACHMENT_BYTES,
        });
    }
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| unreadable(path, e))?;
    let sniffed = image::guess_format(&head[..n]).ok();
    if sniffed.is_none() && !has_image_ext(path) {
        return Ok(Attachment {
            path: path.to_path_buf(),
            size: meta.len(),
            kind: Kind::File,
        });
    }
    let not_image = |why: String| AttachError::NotAnImage {
        path: path.to_path_buf(),
        why,
    };
    let mut reader = ImageReader::open(path)
        .map_err(|e| unreadable(path, e))?
        .with_guessed_format()
        .map_err(|e| unreadable(path, e))?;
    let Some(format) = reader.format() else {
        return Err(not_image(
            "its contents are no image format Weft reads (PNG, JPEG, GIF, WebP, BMP)".into(),
        ));
    };
    reader.limits(reader_limits());
    // Decoding the whole image (not just its header) is what proves a truncated or
    // corrupt file is not one; it is at most MAX_ATTACHMENT_BYTES of input.
    let img = reader.decode().map_err(|e| not_image(e.to_string()))?;
    Ok(Attachment {
        path: path.to_path_buf(),
        size: meta.len(),
        kind: Kind::Image {
            mime: mime_of(format),
            width: img.width(),
            height: img.height(),
        },
    })
}

/// Checks every attachment, stopping at the first bad one.
pub fn check_all(paths: &[PathBuf]) -> Result<Vec<Attachment>, AttachError> {
    paths.iter().map(|p| check(p)).collect()
}

/// True when `path` is an image (by its first bytes, else its extension), without
/// decoding it; drivers use it to split a turn's attachments.
pub fn looks_like_image(path: &Path) -> bool {
    let mut head = [0u8; 64];
    let sniffed = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .ok()
        .and_then(|n| image::guess_format(&head[..n]).ok());
    sniffed.is_some() || has_image_ext(path)
}

/// What one vendor's model takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageLimits {
    /// The longest side, in pixels.
    pub max_edge: u32,
    /// The encoded size, in bytes.
    pub max_bytes: usize,
}

impl ImageLimits {
    /// What both `self` and `other` take: the smaller edge and byte limit. An image
    /// kept for replay to more than one vendor (the native agent's conversation, which
    /// may move between providers) is fitted to all of them at once.
    pub const fn within(self, other: ImageLimits) -> ImageLimits {
        ImageLimits {
            max_edge: if self.max_edge < other.max_edge {
                self.max_edge
            } else {
                other.max_edge
            },
            max_bytes: if self.max_bytes < other.max_bytes {
                self.max_bytes
            } else {
                other.max_bytes
            },
        }
    }
}

/// Anthropic: images past 1568 px on the long side are scaled down by the API anyway
/// (at the cost of latency), and one image may be at most 5 MB once base64-encoded.
pub const CLAUDE: ImageLimits = ImageLimits {
    max_edge: 1568,
    max_bytes: 3_750_000,
};

/// OpenAI (Codex): high-detail images are fitted into 2048 x 2048; 20 MB per image.
pub const OPENAI: ImageLimits = ImageLimits {
    max_edge: 2048,
    max_bytes: 20_000_000,
};

/// Gemini: inline images are tiled from up to 3072 px; a request's inline data is at
/// most 20 MB, so one image is kept well under it.
pub const GEMINI: ImageLimits = ImageLimits {
    max_edge: 3072,
    max_bytes: 7_000_000,
};

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    /// The encoded image.
    pub bytes: Vec<u8>,
    /// Its MIME type.
    pub mime: &'static str,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// True when it was scaled or re-encoded.
    pub changed: bool,
}

impl PreparedImage {
    /// The image base64-encoded (Anthropic's `source.data`, a data URL's tail).
    pub fn base64(&self) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }

    /// The file extension of its format.
    pub fn extension(&self) -> &'static str {
        match self.mime {
            "image/png" => "png",
            "image/gif" => "gif",
            "image/webp" => "webp",
            _ => "jpg",
        }
    }
}

const SENT_AS_IS: &[ImageFormat] = &[
    ImageFormat::Png,
    ImageFormat::Jpeg,
    ImageFormat::Gif,
    ImageFormat::WebP,
];

/// The image at `path` within `limits`.
pub fn prepare_image(path: &Path, limits: ImageLimits) -> Result<PreparedImage, AttachError> {
    let bytes = std::fs::read(path).map_err(|e| unreadable(path, e))?;
    let not_image = |why: String| AttachError::NotAnImage {
        path: path.to_path_buf(),
        why,
    };
    let mut reader = ImageReader::new(Cursor::new(&bytes))
        .with_guessed_format()
        .map_err(|e| unreadable(path, e))?;
    let format = reader
        .format()
        .ok_or_else(|| not_image("no image format Weft reads".into()))?;
    reader.limits(reader_limits());
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| not_image(e.to_string()))?;
    if SENT_AS_IS.contains(&format)
        && w.max(h) <= limits.max_edge
        && bytes.len() <= limits.max_bytes
    {
        return Ok(PreparedImage {
            bytes,
            mime: mime_of(format),
            width: w,
            height: h,
            changed: false,
        });
    }
    let mut reader = ImageReader::with_format(Cursor::new(&bytes), format);
    reader.limits(reader_limits());
    let img = reader.decode().map_err(|e| not_image(e.to_string()))?;
    fit(&img, limits).map_err(|why| AttachError::CannotFit {
        path: path.to_path_buf(),
        max_edge: limits.max_edge,
        max_bytes: limits.max_bytes,
        why,
    })
}

fn fit(img: &DynamicImage, limits: ImageLimits) -> Result<PreparedImage, String> {
    let alpha = img.color().has_alpha();
    let mut edge = limits.max_edge.min(img.width().max(img.height()));
    loop {
        let scaled = if img.width().max(img.height()) > edge {
            img.resize(edge, edge, image::imageops::FilterType::Lanczos3)
        } else {
            img.clone()
        };
        let mut out = Cursor::new(Vec::new());
        let mime = if alpha {
            scaled
                .write_to(&mut out, ImageFormat::Png)
                .map_err(|e| e.to_string())?;
            "image/png"
        } else {
            let rgb = DynamicImage::ImageRgb8(scaled.to_rgb8());
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
            rgb.write_with_encoder(encoder).map_err(|e| e.to_string())?;
            "image/jpeg"
        };
        let bytes = out.into_inner();
        if bytes.len() <= limits.max_bytes {
            return Ok(PreparedImage {
                bytes,
                mime,
                width: scaled.width(),
                height: scaled.height(),
                changed: true,
            });
        }
        if edge <= 64 {
            return Err(format!("still {} bytes at {edge}px", bytes.len()));
        }
        edge = edge * 3 / 4;
    }
}

/// Writes `image` into `dir` under `path`'s stem with its own extension, for agents
/// that take an image by path (Codex's `localImage`).
pub fn write_prepared(image: &PreparedImage, path: &Path, dir: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "image".into());
    let out = dir.join(format!("{stem}.{}", image.extension()));
    std::fs::write(&out, &image.bytes)?;
    Ok(out)
}

/// `path`, or a copy fitted to `limits` in the turn's folder ([`turn_dir`] under
/// `state_dir`), for agents that take an image by path (Codex's `localImage`, Gemini's
/// `@path`). An image that cannot be fitted goes as it is: the kernel checked that it
/// decodes, and the agent says what it makes of it.
pub fn fitted_path(path: &Path, limits: ImageLimits, state_dir: &Path, task_id: &str) -> PathBuf {
    match prepare_image(path, limits) {
        Ok(img) if img.changed && state_dir.is_absolute() => {
            write_prepared(&img, path, &turn_dir(state_dir, task_id))
                .unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The text of `path` when it is UTF-8 and at most `max` bytes, for agents that read
/// no files themselves.
pub fn text_of(path: &Path, max: u64) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > max {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

/// Where a prepared copy of an image goes for one turn: `<state>/run/attachments/<task>`.
pub fn turn_dir(state_dir: &Path, task_id: &str) -> PathBuf {
    let safe: String = task_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    state_dir.join("run").join("attachments").join(safe)
}
