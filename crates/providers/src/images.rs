//! Images given by path are read and base64-encoded before a request is encoded, so the
//! encoders stay pure; web URLs are passed through.

use std::borrow::Cow;
use std::path::Path;

use base64::Engine;
use ybs_core::{ChatRequest, ErrorKind, Image, LlmError, Part};

/// Where an image's bytes are for the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ImageSource<'a> {
    /// Inline base64 with its media type.
    Base64 { media_type: &'a str, data: &'a str },
    /// A web URL the provider fetches itself.
    Url(&'a str),
}

/// The source of an image whose file (if any) was loaded by [`load_images`].
pub(crate) fn source(image: &Image) -> Result<ImageSource<'_>, LlmError> {
    if let Some(data) = &image.data {
        let media_type = match (&image.media_type, &image.path) {
            (Some(media_type), _) => media_type.as_str(),
            (None, Some(path)) => media_type_of(path)?,
            (None, None) => "image/png",
        };
        return Ok(ImageSource::Base64 { media_type, data });
    }
    match &image.path {
        Some(path) if is_url(path) => Ok(ImageSource::Url(path)),
        Some(path) => Err(LlmError::new(
            ErrorKind::BadRequest,
            format!("image {path} was not read before encoding"),
        )),
        None => Err(LlmError::new(
            ErrorKind::BadRequest,
            "an image part has neither a path nor data",
        )),
    }
}

/// The media type of a PDF document, which travels as an image part with this type.
pub(crate) const PDF: &str = "application/pdf";

/// Whether an image part is really a document (a PDF), which only some APIs take.
pub(crate) fn is_document(image: &Image) -> bool {
    image.media_type.as_deref() == Some(PDF)
        || (image.media_type.is_none()
            && image
                .path
                .as_deref()
                .is_some_and(|path| path.to_ascii_lowercase().ends_with(".pdf")))
}

/// An error for the first document (PDF) part of `request`, for APIs that cannot take one:
/// a document is never dropped silently.
pub(crate) fn refuse_documents(request: &ChatRequest, api: &str) -> Result<(), LlmError> {
    let document = request
        .messages
        .iter()
        .flat_map(|message| message.parts.iter())
        .find_map(|part| match part {
            Part::Image(image) if is_document(image) => Some(image),
            _ => None,
        });
    match document {
        Some(image) => Err(LlmError::new(
            ErrorKind::BadRequest,
            format!(
                "{api} cannot take PDF documents ({}): use the responses or anthropic provider",
                image.path.as_deref().unwrap_or("inline data")
            ),
        )),
        None => Ok(()),
    }
}

fn is_url(path: &str) -> bool {
    path.starts_with("http://") || path.starts_with("https://") || path.starts_with("data:")
}

fn media_type_of(path: &str) -> Result<&'static str, LlmError> {
    let extension = Path::new(path)
        .extension()
        .and_then(|ext| ext.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match extension.as_str() {
        "png" => Ok("image/png"),
        "jpg" | "jpeg" => Ok("image/jpeg"),
        "gif" => Ok("image/gif"),
        "webp" => Ok("image/webp"),
        "pdf" => Ok(PDF),
        _ => Err(LlmError::new(
            ErrorKind::BadRequest,
            format!(
                "cannot tell the media type of image {path}: use a .png, .jpg, .gif or .webp \
                 file, or set media_type"
            ),
        )),
    }
}

/// The request with every image given by a local path read into base64 data (borrowed
/// unchanged when it has none).
pub(crate) fn load_images(request: &ChatRequest) -> Result<Cow<'_, ChatRequest>, LlmError> {
    let needs_loading = |part: &Part| matches!(part, Part::Image(Image { data: None, path: Some(path), .. }) if !is_url(path));
    if !request
        .messages
        .iter()
        .any(|message| message.parts.iter().any(needs_loading))
    {
        return Ok(Cow::Borrowed(request));
    }
    let mut request = request.clone();
    for part in request
        .messages
        .iter_mut()
        .flat_map(|message| message.parts.iter_mut())
    {
        if !needs_loading(part) {
            continue;
        }
        if let Part::Image(image) = part
            && let Some(path) = &image.path
        {
            let media_type = match &image.media_type {
                Some(media_type) => media_type.clone(),
                None => media_type_of(path)?.to_owned(),
            };
            let bytes = std::fs::read(path).map_err(|error| {
                LlmError::new(
                    ErrorKind::BadRequest,
                    format!("cannot read image {path}: {error}"),
                )
            })?;
            image.data = Some(base64::engine::general_purpose::STANDARD.encode(bytes));
            image.media_type = Some(media_type);
        }
    }
    Ok(Cow::Owned(request))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ybs_core::{Message, Role};

    fn with_image(image: Image) -> ChatRequest {
        ChatRequest::new(
            "m",
            vec![Message::new(Role::User, vec![Part::Image(image)])],
        )
    }

    #[test]
    fn reads_files_and_keeps_urls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dot.PNG");
        std::fs::write(&path, b"\x89PNG").unwrap();
        let path = path.to_string_lossy().into_owned();
        let request = with_image(Image {
            media_type: None,
            path: Some(path.clone()),
            data: None,
        });
        let loaded = load_images(&request).unwrap();
        let Part::Image(image) = &loaded.messages[0].parts[0] else {
            panic!("not an image")
        };
        assert_eq!(image.data.as_deref(), Some("iVBORw=="));
        assert_eq!(
            source(image).unwrap(),
            ImageSource::Base64 {
                media_type: "image/png",
                data: "iVBORw=="
            }
        );

        let url = with_image(Image {
            media_type: None,
            path: Some("https://example.com/a.png".into()),
            data: None,
        });
        assert!(matches!(load_images(&url).unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn unreadable_images_say_which() {
        let request = with_image(Image {
            media_type: None,
            path: Some("/nonexistent/x.jpg".into()),
            data: None,
        });
        let err = load_images(&request).unwrap_err();
        assert!(
            err.message
                .starts_with("cannot read image /nonexistent/x.jpg: "),
            "{}",
            err.message
        );
        let request = with_image(Image {
            media_type: None,
            path: Some("/tmp/x.bmp".into()),
            data: None,
        });
        assert_eq!(
            load_images(&request).unwrap_err().message,
            "cannot tell the media type of image /tmp/x.bmp: use a .png, .jpg, .gif or .webp \
             file, or set media_type"
        );
    }
}
