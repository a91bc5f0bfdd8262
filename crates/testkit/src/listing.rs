//! What the listing endpoints of the fake servers report: the models (`/models`, Ollama's
//! `/api/tags` and `/api/show`, LM Studio's `/api/v0/models`) and OpenRouter's credits. Part
//! of the script's JSON format.

use serde::{Deserialize, Serialize};

/// A model reported by the listing endpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Model {
    /// Model id (`name` in Ollama's listings).
    pub id: String,
    /// Display name (OpenRouter); the id when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Context window in tokens.
    pub context_length: u64,
    /// The most tokens one reply may have (OpenRouter's `top_provider.max_completion_tokens`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u64>,
    /// Price per prompt token in dollars, as OpenRouter's decimal string.
    pub prompt_price: String,
    /// Price per completion token in dollars, as OpenRouter's decimal string.
    pub completion_price: String,
    /// OpenRouter's `supported_parameters`.
    pub supported_parameters: Vec<String>,
    /// Ollama architecture (the `<arch>` in `model_info["<arch>.context_length"]`).
    pub architecture: String,
    /// LM Studio: the window the model is loaded with (`loaded_context_length`, state
    /// `loaded`); `None`: not loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loaded_context_length: Option<u64>,
}

impl Default for Model {
    fn default() -> Self {
        Self {
            id: "fake-model".to_owned(),
            name: None,
            context_length: 128_000,
            max_completion_tokens: None,
            prompt_price: "0.000001".to_owned(),
            completion_price: "0.000002".to_owned(),
            supported_parameters: vec![
                "max_tokens".to_owned(),
                "temperature".to_owned(),
                "tools".to_owned(),
                "tool_choice".to_owned(),
                "reasoning".to_owned(),
                "include_reasoning".to_owned(),
            ],
            architecture: "llama".to_owned(),
            loaded_context_length: None,
        }
    }
}

impl Model {
    /// A model with this id and context window, other fields defaulted.
    pub fn new(id: impl Into<String>, context_length: u64) -> Self {
        Self {
            id: id.into(),
            context_length,
            ..Self::default()
        }
    }

    /// The display name.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.id)
    }
}

/// OpenRouter account credits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Credits {
    /// Credits bought.
    pub total_credits: f64,
    /// Credits used.
    pub total_usage: f64,
}

impl Default for Credits {
    fn default() -> Self {
        Self {
            total_credits: 10.0,
            total_usage: 2.5,
        }
    }
}
