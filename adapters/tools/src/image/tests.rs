use ::image::codecs::jpeg::JpegEncoder;
use ::image::{DynamicImage, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use base64::Engine as _;

use super::*;

/// A smooth picture of `width`×`height` (compresses as a photo would).
fn gradient(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        Rgb([
            (x * 255 / width) as u8,
            (y * 255 / height) as u8,
            ((x + y) % 256) as u8,
        ])
    })
}

/// Pixels no encoder can shrink.
fn noise(width: u32, height: u32) -> RgbaImage {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    RgbaImage::from_fn(width, height, |_, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        Rgba(state.to_le_bytes()[..4].try_into().unwrap())
    })
}

fn png(image: DynamicImage) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).unwrap();
    out.into_inner()
}

fn jpeg(image: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(image)
        .unwrap();
    out
}

fn sent_bytes(prepared: &Prepared) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(&prepared.image.data)
        .unwrap()
}

#[test]
fn the_format_is_read_from_the_bytes() {
    assert_eq!(Format::sniff(b"\x89PNG\r\n\x1a\n...."), Some(Format::Png));
    assert_eq!(Format::sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some(Format::Jpeg));
    assert_eq!(Format::sniff(b"GIF89a.."), Some(Format::Gif));
    assert_eq!(Format::sniff(b"GIF87a.."), Some(Format::Gif));
    assert_eq!(Format::sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some(Format::Webp));
    assert_eq!(Format::sniff(b"RIFF\0\0\0\0WAVEfmt "), None);
    assert_eq!(Format::sniff(b"\x89PN"), None);
    assert_eq!(Format::sniff(b"hello"), None);
    assert_eq!(Format::sniff(b""), None);
}

#[test]
fn a_name_that_says_image_over_bytes_that_are_not_is_refused() {
    let err = prepare(b"just some notes\n", "x.png").unwrap_err();
    assert_eq!(
        err,
        "x.png is not a PNG, JPEG, GIF or WebP image (its bytes start like text)"
    );
    let err = prepare(b"%PDF-1.7\n\0\x01\x02", "y.jpg").unwrap_err();
    assert!(err.contains("binary of another kind"), "{err}");
    assert!(prepare(b"", "z.gif").unwrap_err().contains("it is empty"));
}

#[test]
fn an_image_within_the_limits_is_sent_as_its_own_bytes() {
    let bytes = png(DynamicImage::ImageRgb8(gradient(120, 80)));
    // Named as text: the bytes decide.
    let prepared = prepare(&bytes, "shot.txt").unwrap();
    assert_eq!(sent_bytes(&prepared), bytes);
    assert_eq!(prepared.image.media_type, "image/png");
    assert_eq!((prepared.width, prepared.height), (120, 80));
    assert_eq!(prepared.original, (120, 80));
    assert!(prepared.is_original());
    assert_eq!(prepared.sent_bytes, bytes.len());
    assert_eq!(
        prepared.line("shot.txt"),
        format!("[image shot.txt: 120×80 PNG, {} bytes]", bytes.len())
    );
}

#[test]
fn a_large_photo_is_scaled_within_the_limits_keeping_its_aspect() {
    let bytes = jpeg(&gradient(2400, 1800));
    let prepared = prepare(&bytes, "photo.jpg").unwrap();
    let (w, h) = (prepared.width, prepared.height);
    assert!(w <= MAX_EDGE && h <= MAX_EDGE, "{w}×{h}");
    assert!(u64::from(w) * u64::from(h) <= MAX_PIXELS, "{w}×{h}");
    // Close to the limit, not far under it.
    assert!(
        u64::from(w) * u64::from(h) > MAX_PIXELS * 99 / 100,
        "{w}×{h}"
    );
    let aspect = f64::from(w) / f64::from(h);
    assert!((aspect - 4.0 / 3.0).abs() < 0.01, "{w}×{h}");
    assert_eq!(prepared.original, (2400, 1800));
    assert_eq!(prepared.sent, Format::Jpeg);
    assert_eq!(prepared.image.media_type, "image/jpeg");
    let sent = sent_bytes(&prepared);
    assert_eq!(sent.len(), prepared.sent_bytes);
    assert!(sent.len() <= MAX_BYTES);
    let back = ::image::load_from_memory(&sent).unwrap();
    assert_eq!((back.width(), back.height()), (w, h));
    assert_eq!(
        prepared.line("photo.jpg"),
        format!(
            "[image photo.jpg: 2400×1800 JPEG, sent as {w}×{h} JPEG, {} bytes]",
            sent.len()
        )
    );
}

#[test]
fn a_wide_png_is_cut_to_the_long_edge_and_stays_a_png() {
    let bytes = png(DynamicImage::ImageRgb8(gradient(3136, 200)));
    let prepared = prepare(&bytes, "wide.png").unwrap();
    assert_eq!((prepared.width, prepared.height), (MAX_EDGE, 100));
    assert_eq!(prepared.sent, Format::Png);
    assert_eq!(Format::sniff(&sent_bytes(&prepared)), Some(Format::Png));
}

#[test]
fn a_png_too_heavy_for_the_byte_limit_is_sent_as_a_jpeg() {
    // Within the pixel limits, over the byte limit even re-encoded.
    let bytes = png(DynamicImage::ImageRgba8(noise(1000, 1000)));
    assert!(bytes.len() > MAX_BYTES, "{} bytes", bytes.len());
    let prepared = prepare(&bytes, "noise.png").unwrap();
    assert_eq!((prepared.width, prepared.height), (1000, 1000));
    assert_eq!(prepared.sent, Format::Jpeg);
    assert!(prepared.sent_bytes <= MAX_BYTES);
    assert_eq!(Format::sniff(&sent_bytes(&prepared)), Some(Format::Jpeg));
}

#[test]
fn a_truncated_image_is_refused_with_its_reason() {
    let bytes = jpeg(&gradient(300, 200));
    let err = prepare(&bytes[..bytes.len() / 2], "cut.jpg").unwrap_err();
    assert!(
        err.starts_with("cut.jpg is a JPEG image that does not decode"),
        "{err}"
    );
    // Bytes after the end marker are ignored, as decoders do.
    let mut tail = bytes.clone();
    tail.extend_from_slice(b"\xFF\xDA trailing data");
    assert!(prepare(&tail, "tail.jpg").is_ok());
    let bytes = png(DynamicImage::ImageRgb8(gradient(300, 200)));
    let err = prepare(&bytes[..bytes.len() / 2], "cut.png").unwrap_err();
    assert!(
        err.starts_with("cut.png is a PNG image that does not decode"),
        "{err}"
    );
}

#[test]
fn transparency_is_laid_on_white_in_a_jpeg() {
    let clear = DynamicImage::ImageRgba8(RgbaImage::from_pixel(4, 4, Rgba([0, 0, 0, 0])));
    assert_eq!(flatten(&clear).get_pixel(1, 1), &Rgb([255, 255, 255]));
    let solid = DynamicImage::ImageRgba8(RgbaImage::from_pixel(4, 4, Rgba([10, 20, 30, 255])));
    assert_eq!(flatten(&solid).get_pixel(1, 1), &Rgb([10, 20, 30]));
}

#[test]
fn the_fitted_size_keeps_both_limits() {
    assert_eq!(fit(800, 600), (800, 600));
    assert_eq!(fit(1568, 700), (1568, 700));
    for (w, h) in [
        (4000, 3000),
        (1, 100_000),
        (1073, 1073),
        (1600, 1600),
        (12_000, 9_000),
    ] {
        let (fw, fh) = fit(w, h);
        assert!(fw.max(fh) <= MAX_EDGE, "{w}×{h} → {fw}×{fh}");
        assert!(
            u64::from(fw) * u64::from(fh) <= MAX_PIXELS,
            "{w}×{h} → {fw}×{fh}"
        );
        assert!(fw >= 1 && fh >= 1);
    }
}

#[test]
fn a_small_file_declaring_a_huge_picture_is_refused_before_decoding() {
    // 20,000 pixels wide, one high: a few hundred bytes of PNG.
    let wide = DynamicImage::ImageLuma8(image::GrayImage::from_pixel(20_000, 1, image::Luma([7])));
    let mut bytes = Vec::new();
    wide.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .unwrap();
    assert!(bytes.len() < 2_000, "{}", bytes.len());
    let err = prepare(&bytes, "wide.png").unwrap_err();
    assert!(
        err.starts_with("wide.png is a PNG image that does not decode"),
        "{err}"
    );
}
