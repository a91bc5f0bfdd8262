//! Helpers shared by the integration tests.
#![allow(dead_code)]

use futures::StreamExt;
use serde_json::Value;

/// A reply read to its end, or to the point where the connection broke.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    /// The body ended with an error (connection dropped).
    pub broken: bool,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub async fn post(url: String, body: Value) -> Reply {
    let response = reqwest::Client::new()
        .post(url)
        .header("authorization", "Bearer sk-test")
        .json(&body)
        .send()
        .await
        .unwrap();
    read(response).await
}

pub async fn get(url: String) -> Reply {
    read(reqwest::get(url).await.unwrap()).await
}

async fn read(response: reqwest::Response) -> Reply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut stream = response.bytes_stream();
    let mut bytes = Vec::new();
    let mut broken = false;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(_) => {
                broken = true;
                break;
            }
        }
    }
    Reply {
        status,
        headers,
        text: String::from_utf8(bytes).unwrap(),
        broken,
    }
}

/// Every `data:` payload of an SSE text, parsed (skipping `[DONE]`).
pub fn sse_json(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}
