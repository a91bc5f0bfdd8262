//! Images for the next message: `-i/--image FILE` on the command line and `/image PATH` in
//! the REPL. The providers crate reads and encodes the file when it sends; a model that does
//! not take images rejects the request, and ybs says that is the likely cause.

use std::path::Path;

use ybs_core::{Image, Message, Part, Role};

/// The media type of an image file by its extension.
fn media_type(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// The image part of `path` (relative to `cwd`); `Err` says why it cannot be attached.
pub fn image_part(path: &Path, cwd: &Path) -> Result<Part, String> {
    let full = cwd.join(path);
    let kind = media_type(&full).ok_or_else(|| {
        format!(
            "{}: not an image ybs can attach (png, jpg, gif or webp)",
            path.display()
        )
    })?;
    if !full.is_file() {
        return Err(format!("{}: no such image file", path.display()));
    }
    Ok(Part::Image(Image {
        media_type: Some(kind.to_owned()),
        path: Some(full.display().to_string()),
        data: None,
    }))
}

/// A user message of `text` with `images`.
pub fn message(text: &str, images: Vec<Part>) -> Message {
    let mut parts = vec![Part::Text {
        content: text.to_owned(),
    }];
    parts.extend(images);
    Message::new(Role::User, parts)
}

/// A turn's failure, with the likely cause when the message carried images and the
/// provider rejected the request.
pub fn explain(error: String, had_images: bool, model: &str) -> String {
    let rejected = ["400", "bad request", "image", "vision", "multimodal", "422"]
        .iter()
        .any(|word| error.to_ascii_lowercase().contains(word));
    if had_images && rejected {
        format!(
            "{error}. The message had images: the model {model} may not take images; choose a \
             model with vision (--model, /model) or send the message without them"
        )
    } else {
        error
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn images_are_checked_before_they_are_attached() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.PNG"), b"\x89PNG").unwrap();
        let part = image_part(Path::new("a.PNG"), dir.path()).unwrap();
        let Part::Image(image) = part else {
            panic!("not an image part")
        };
        assert_eq!(image.media_type.as_deref(), Some("image/png"));
        let error = image_part(Path::new("b.png"), dir.path()).unwrap_err();
        assert_eq!(error, "b.png: no such image file");
        let error = image_part(Path::new("n.txt"), dir.path()).unwrap_err();
        assert!(error.contains("not an image"), "{error}");
    }

    #[test]
    fn a_rejected_request_with_images_names_vision() {
        let text = explain("bad request: image_url not supported".into(), true, "m1");
        assert!(text.contains("the model m1 may not take images"), "{text}");
        assert_eq!(explain("bad request".into(), false, "m1"), "bad request");
    }
}
