//! Checking attachments and fitting images, on real files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use image::{ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use weft_attachments::{
    check, prepare_image, AttachError, ImageLimits, Kind, CLAUDE, MAX_ATTACHMENT_BYTES,
};

fn noisy_rgb(w: u32, h: u32) -> RgbImage {
    RgbImage::from_fn(w, h, |x, y| {
        Rgb([(x * 7 + y * 3) as u8, (x ^ y) as u8, (x * y) as u8])
    })
}

#[test]
fn a_png_is_an_image_with_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shot.png");
    noisy_rgb(40, 30).save(&p).unwrap();
    let a = check(&p).unwrap();
    assert_eq!(
        a.kind,
        Kind::Image {
            mime: "image/png",
            width: 40,
            height: 30
        }
    );
}

#[test]
fn a_text_file_is_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.md");
    std::fs::write(&p, "# hello\n").unwrap();
    assert_eq!(check(&p).unwrap().kind, Kind::File);
}

#[test]
fn a_png_that_is_not_an_image_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fake.png");
    std::fs::write(&p, "this is plain text, not pixels").unwrap();
    let e = check(&p).unwrap_err();
    assert!(matches!(e, AttachError::NotAnImage { .. }), "{e:?}");
    assert!(e.to_string().contains("fake.png is not an image"), "{e}");
    // A real PNG header with its body cut off is no image either.
    let cut = dir.path().join("cut.png");
    noisy_rgb(64, 64).save(&cut).unwrap();
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(
        check(&cut).unwrap_err(),
        AttachError::NotAnImage { .. }
    ));
}

#[test]
fn a_200_mb_attachment_is_refused_with_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.bin");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(200 * 1024 * 1024).unwrap();
    let e = check(&p).unwrap_err();
    let AttachError::TooLarge { size, limit, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(*size, 200 * 1024 * 1024);
    assert_eq!(*limit, MAX_ATTACHMENT_BYTES);
    assert!(
        e.to_string()
            .contains("the limit is 33554432 bytes (32 MiB)"),
        "{e}"
    );
}

#[test]
fn a_folder_a_missing_file_and_a_relative_path_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        check(dir.path()).unwrap_err(),
        AttachError::NotAFile(_)
    ));
    assert!(matches!(
        check(&dir.path().join("nope.png")).unwrap_err(),
        AttachError::Unreadable { .. }
    ));
    assert!(matches!(
        check(Path::new("rel.png")).unwrap_err(),
        AttachError::NotAbsolute(_)
    ));
}

#[test]
fn a_small_image_is_sent_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("small.png");
    noisy_rgb(100, 50).save(&p).unwrap();
    let out = prepare_image(&p, CLAUDE).unwrap();
    assert!(!out.changed);
    assert_eq!(out.bytes, std::fs::read(&p).unwrap());
    assert_eq!(out.mime, "image/png");
}

#[test]
fn a_large_image_is_scaled_to_the_vendors_edge_keeping_its_aspect() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.png");
    noisy_rgb(3200, 1600).save(&p).unwrap();
    let out = prepare_image(&p, CLAUDE).unwrap();
    assert!(out.changed);
    assert_eq!((out.width, out.height), (1568, 784));
    assert_eq!(out.mime, "image/jpeg");
    let back = image::load_from_memory_with_format(&out.bytes, ImageFormat::Jpeg).unwrap();
    assert_eq!((back.width(), back.height()), (1568, 784));
    assert!(out.bytes.len() <= CLAUDE.max_bytes);
}

#[test]
fn transparency_stays_png_and_a_byte_limit_shrinks_further() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("alpha.png");
    RgbaImage::from_fn(900, 900, |x, y| {
        Rgba([
            (x * 13) as u8,
            (y * 7) as u8,
            (x ^ y) as u8,
            (x % 256) as u8,
        ])
    })
    .save(&p)
    .unwrap();
    let tight = ImageLimits {
        max_edge: 2000,
        max_bytes: 60_000,
    };
    let out = prepare_image(&p, tight).unwrap();
    assert_eq!(out.mime, "image/png");
    assert!(out.bytes.len() <= 60_000, "{}", out.bytes.len());
    assert!(out.width < 900);
}

#[test]
fn bmp_is_re_encoded_for_the_vendor() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("old.bmp");
    noisy_rgb(20, 20).save(&p).unwrap();
    let out = prepare_image(&p, CLAUDE).unwrap();
    assert!(out.changed);
    assert_eq!(out.mime, "image/jpeg");
}

#[test]
fn limits_within_each_other_take_the_smaller_of_each() {
    let all = weft_attachments::CLAUDE
        .within(weft_attachments::OPENAI)
        .within(weft_attachments::GEMINI);
    assert_eq!(all.max_edge, 1568);
    assert_eq!(all.max_bytes, 3_750_000);
    let mixed = ImageLimits {
        max_edge: 100,
        max_bytes: 10,
    }
    .within(ImageLimits {
        max_edge: 50,
        max_bytes: 20,
    });
    assert_eq!((mixed.max_edge, mixed.max_bytes), (50, 10));
}

/// CRC-32 (PNG's) of `bytes`.
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for b in bytes {
        c ^= u32::from(*b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A small file that claims a 9000 x 9000 RGBA picture (324 MB decoded): refused for
/// what decoding it would take, before any of it is decoded.
#[test]
fn an_image_that_would_decode_past_the_memory_cap_is_refused() {
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&9000u32.to_be_bytes());
    ihdr.extend_from_slice(&9000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(&13u32.to_be_bytes());
    png.extend_from_slice(&ihdr);
    png.extend_from_slice(&crc32(&ihdr).to_be_bytes());
    // The first of its data: the decoder has read the header once it gets there.
    let idat = b"IDAT\x78\x9c\x03\x00\x00\x00\x00\x01".to_vec();
    png.extend_from_slice(&8u32.to_be_bytes());
    png.extend_from_slice(&idat);
    png.extend_from_slice(&crc32(&idat).to_be_bytes());
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bomb.png");
    std::fs::write(&p, &png).unwrap();
    let e = check(&p).unwrap_err().to_string();
    assert!(e.to_lowercase().contains("limit"), "{e}");
    const { assert!(weft_attachments::MAX_DECODED_BYTES < 9000 * 9000 * 4) };
}
