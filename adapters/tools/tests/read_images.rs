//! `read` on images: shown to the model as an image, named in one line,
//! under the same path confinement as any file.

mod common;

use std::io::Cursor;

use base64::Engine as _;
use common::{Fixture, assert_error};
use cox_tools::ReadTool;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::json;

fn picture(width: u32, height: u32, format: ImageFormat) -> Vec<u8> {
    let pixels = RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8])
    });
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(pixels)
        .write_to(&mut out, format)
        .unwrap();
    out.into_inner()
}

fn decoded(data: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap()
}

#[tokio::test]
async fn read_shows_an_image_as_an_image_named_in_one_line() {
    let fx = Fixture::new();
    let bytes = picture(64, 48, ImageFormat::Png);
    fx.file("img/shot.png", &bytes);
    // offset and limit are for text; an image ignores them.
    let result = fx
        .run(
            &ReadTool,
            json!({"path": "img/shot.png", "offset": 5, "limit": 1}),
        )
        .await;
    assert!(result.ok, "{result:?}");
    assert_eq!(
        result.visible,
        format!("[image img/shot.png: 64×48 PNG, {} bytes]", bytes.len())
    );
    assert_eq!(result.bytes, Some(bytes.len() as u64));
    assert_eq!(result.images.len(), 1);
    assert_eq!(result.images[0].media_type, "image/png");
    assert_eq!(decoded(&result.images[0].data), bytes);
}

#[tokio::test]
async fn the_bytes_decide_not_the_name() {
    let fx = Fixture::new();
    let bytes = picture(40, 30, ImageFormat::Gif);
    fx.file("notes.txt", &bytes);
    let result = fx.run(&ReadTool, json!({"path": "notes.txt"})).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(result.images[0].media_type, "image/gif");
    assert!(result.visible.starts_with("[image notes.txt: 40×30 GIF"));

    fx.file("fake.png", "this is a text file\n");
    let result = fx.run(&ReadTool, json!({"path": "fake.png"})).await;
    assert_error(
        &result,
        &["fake.png is not a PNG, JPEG, GIF or WebP image (its bytes start like text)"],
    );
    assert!(result.images.is_empty());

    // Text with any other name is still read as text.
    fx.file("plain.md", "# title\n");
    let result = fx.run(&ReadTool, json!({"path": "plain.md"})).await;
    assert_eq!(result.visible, "     1\t# title\n");
}

#[tokio::test]
async fn a_large_image_is_sent_scaled_and_says_so() {
    let fx = Fixture::new();
    fx.file("big.jpg", picture(2000, 1000, ImageFormat::Jpeg));
    let result = fx.run(&ReadTool, json!({"path": "big.jpg"})).await;
    assert!(result.ok, "{result:?}");
    let sent = decoded(&result.images[0].data);
    let back = image::load_from_memory(&sent).unwrap();
    assert_eq!((back.width(), back.height()), (1516, 758));
    assert_eq!(
        result.visible,
        format!(
            "[image big.jpg: 2000×1000 JPEG, sent as 1516×758 JPEG, {} bytes]",
            sent.len()
        )
    );
}

#[tokio::test]
async fn a_broken_image_is_refused_with_its_reason() {
    let fx = Fixture::new();
    let bytes = picture(200, 100, ImageFormat::Png);
    fx.file("cut.png", &bytes[..bytes.len() / 2]);
    assert_error(
        &fx.run(&ReadTool, json!({"path": "cut.png"})).await,
        &["cut.png is a PNG image that does not decode"],
    );
}

#[tokio::test]
async fn an_image_outside_the_workspace_is_refused_like_any_file() {
    let fx = Fixture::new();
    let outside = fx.outside.join("photo.png");
    std::fs::write(&outside, picture(10, 10, ImageFormat::Png)).unwrap();
    let result = fx
        .run(&ReadTool, json!({"path": "../outside/photo.png"}))
        .await;
    assert_error(&result, &["is outside the workspace"]);
    assert!(result.images.is_empty());
    let result = fx
        .run(&ReadTool, json!({"path": outside.to_str().unwrap()}))
        .await;
    assert_error(&result, &["is outside the workspace"]);
}

#[tokio::test]
async fn a_missing_image_or_a_folder_named_like_one_reads_as_before() {
    let fx = Fixture::new();
    assert_error(
        &fx.run(&ReadTool, json!({"path": "none.png"})).await,
        &["file none.png does not exist"],
    );
    std::fs::create_dir(fx.at("icons.png")).unwrap();
    assert_error(
        &fx.run(&ReadTool, json!({"path": "icons.png"})).await,
        &["icons.png is a directory"],
    );
}

#[tokio::test]
async fn reading_an_image_stops_when_cancelled() {
    let fx = Fixture::new();
    fx.file("a.png", picture(10, 10, ImageFormat::Png));
    assert_error(
        &fx.run_cancelled(&ReadTool, json!({"path": "a.png"})).await,
        &["read was cancelled"],
    );
}
