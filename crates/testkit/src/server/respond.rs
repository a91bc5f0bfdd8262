//! A JSON response, the shape of every reply that is not a stream.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

/// `body` as `application/json` with `status`.
pub(super) fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(crate::wire::json_text(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
