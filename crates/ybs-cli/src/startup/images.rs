//! Images for the next message: `-i/--image FILE` on the command line and `/image PATH` in
//! the REPL, attached when the file's first bytes are those of a png, jpg, gif or webp image
//! (its type is taken from them, not from its name). The providers crate reads and encodes
//! the file when it sends; a model that does not take images rejects the request, and ybs
//! says that is the likely cause.

use std::path::Path;

use ybs_core::{Image, Message, Part, Role};

/// The media type of an image by its first bytes (its magic number): a file's extension
/// says what it claims to be, not what it is.
pub fn media_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG") {
        Some("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.starts_with(b"RIFF") && head.get(8..12) == Some(&b"WEBP"[..]) {
        Some("image/webp")
    } else {
        None
    }
}

/// The most bytes read to tell an image's type.
const HEAD_BYTES: u64 = 16;

/// The image part of `path` (relative to `cwd`); `Err` says why it cannot be attached.
pub fn image_part(path: &Path, cwd: &Path) -> Result<Part, String> {
    let full = cwd.join(path);
    // The user named the file: a link is followed, but only a regular file is read.
    let head = match ybs_fsguard::read_file(&full, HEAD_BYTES, ybs_fsguard::Links::Follow) {
        Ok(head) => head.bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("{}: no such image file", path.display()));
        }
        Err(error) => return Err(format!("{}: cannot read it: {error}", path.display())),
    };
    let kind = media_type(&head).ok_or_else(|| {
        format!(
            "{}: not an image ybs can attach (its bytes are not png, jpg, gif or webp)",
            path.display()
        )
    })?;
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
        assert_eq!(error, "n.txt: no such image file");
        // A text file named like an image is not one, whatever its name says.
        std::fs::write(dir.path().join("fake.png"), b"just text").unwrap();
        let error = image_part(Path::new("fake.png"), dir.path()).unwrap_err();
        assert!(error.contains("fake.png: not an image"), "{error}");
        // An image is one whatever its name.
        std::fs::write(dir.path().join("photo"), b"\xff\xd8\xff\xe0").unwrap();
        let Part::Image(image) = image_part(Path::new("photo"), dir.path()).unwrap() else {
            panic!("not an image part")
        };
        assert_eq!(image.media_type.as_deref(), Some("image/jpeg"));
        std::fs::write(dir.path().join("w.webp"), b"RIFF\0\0\0\0WEBPVP8 ").unwrap();
        assert!(image_part(Path::new("w.webp"), dir.path()).is_ok());
    }

    #[test]
    fn a_rejected_request_with_images_names_vision() {
        let text = explain("bad request: image_url not supported".into(), true, "m1");
        assert!(text.contains("the model m1 may not take images"), "{text}");
        assert_eq!(explain("bad request".into(), false, "m1"), "bad request");
    }
}
