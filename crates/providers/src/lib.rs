//! Provider adapters: turns a [`ybs_core::ChatRequest`] into a stream of
//! [`ybs_core::StreamEvent`]s for OpenAI-compatible servers (OpenAI, OpenRouter, LM Studio,
//! llama.cpp, vLLM, LocalAI), Anthropic Messages and Ollama, with retries, model lists and
//! account balance.
//!
//! This crate is filled in by the provider-adapters issue; for now it only fixes its place in
//! the workspace.
