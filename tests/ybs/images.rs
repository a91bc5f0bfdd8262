//! `-i/--image` end to end: the image reaches the request, a missing file is refused before
//! anything is sent, and a model that rejects images gets a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Project, text};
use ybs_testkit::{Fault, Turn};

#[test]
fn an_image_reaches_the_request() {
    let project = Project::new(vec![Turn::text(["a red dot"])]);
    std::fs::write(project.file("dot.png"), b"\x89PNG\r\n\x1a\nfake").unwrap();
    let output = project.ybs(&["exec", "-i", "dot.png", "what is this?"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let body = &project.bodies()[0];
    let user = body["messages"].as_array().unwrap().last().unwrap();
    let rendered = user["content"].to_string();
    assert!(rendered.contains("what is this?"), "{rendered}");
    assert!(rendered.contains("data:image/png;base64,"), "{rendered}");
}

#[test]
fn a_missing_image_is_refused_before_sending() {
    let project = Project::new(vec![Turn::text(["never"])]);
    let output = project.ybs(&["exec", "--image", "none.png", "hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text(&output.stderr),
        "ybs: error: none.png: no such image file\n"
    );
    assert!(project.bodies().is_empty());
}

#[test]
fn a_model_that_rejects_images_gets_a_clear_error() {
    let project = Project::new(vec![Turn::fault(Fault::status(400))]);
    std::fs::write(project.file("dot.png"), b"\x89PNG\r\n\x1a\nfake").unwrap();
    let output = project.ybs(&["exec", "-i", "dot.png", "what is this?"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("the model fake-model may not take images"),
        "{stderr}"
    );
}
