//! What each kind of provider can do and needs, written once: whether it wants an API key
//! (and from which environment variable), its default base URL and model, hosted web search,
//! document (PDF) input, how a model's limits are learned, whether it runs on one's own
//! machine, whether it has a balance. ybs and bb7 ask [`ProviderKind::capabilities`] instead
//! of matching on kinds themselves, so a new kind is described here and both follow.

use crate::config::ProviderKind;
use crate::local_server::is_local;

/// When a kind needs an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRequirement {
    /// Never: a server of one's own (a key given is still sent).
    None,
    /// Always: a hosted service.
    Always,
    /// Except at a server on this machine or the local network (llama.cpp speaks Anthropic
    /// Messages too).
    UnlessLocal,
    /// Only at the kind's default endpoint: the Responses API is OpenAI's own, but compatible
    /// servers elsewhere take it without a key.
    AtDefaultEndpoint,
}

/// How the limits of a model (its context window, the longest reply) are learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitsSource {
    /// From a table of known models (ybs's catalog, the price table): the API's model list
    /// names no windows, so asking it is worth it only for a model the table lacks.
    Catalog,
    /// From the API's model list (`GET /models`), which names each model's window (and, at
    /// a server of one's own, from what the server says of the model it runs).
    ModelList,
    /// By asking the server about the model it runs: llama.cpp's `/props`, Ollama's
    /// `/api/show`, LM Studio's `/api/v0/models`.
    LocalServer,
}

/// Where a kind's server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosting {
    /// A hosted service on the internet.
    Hosted,
    /// A server of one's own, on this machine or the local network.
    Local,
    /// Either: it depends on the endpoint configured.
    ByEndpoint,
}

/// What one kind of provider can do and needs; see [`ProviderKind::capabilities`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// When an API key is needed.
    pub api_key: KeyRequirement,
    /// The environment variable a missing key is read from.
    pub api_key_env: Option<&'static str>,
    /// The base URL used when the config names none (`None`: the user must say where).
    pub default_base_url: Option<&'static str>,
    /// The model used when the config names none (`None`: whatever the server runs, which
    /// the user names).
    pub default_model: Option<&'static str>,
    /// Whether the provider runs a web search itself when a request asks for it.
    pub hosted_web_search: bool,
    /// Whether a request may carry PDF documents (Anthropic `document`, Responses
    /// `input_file`).
    pub document_input: bool,
    /// Whether a reply stored by the provider can be continued by its id
    /// (`previous_response_id`) instead of sending the whole conversation again.
    pub continues_stored_replies: bool,
    /// Whether the server loads the model with the context window the request names, and
    /// otherwise cuts prompts to its own small default (Ollama's `num_ctx`).
    pub window_set_per_request: bool,
    /// How a model's limits are learned.
    pub limits: LimitsSource,
    /// Where the server runs.
    pub hosting: Hosting,
    /// Whether the account's balance can be asked (OpenRouter's credits).
    pub balance: bool,
}

/// The capabilities of a hosted OpenAI-compatible service: a key, limits from the catalog,
/// nothing more; the presets below change what differs.
const HOSTED: Capabilities = Capabilities {
    api_key: KeyRequirement::Always,
    api_key_env: None,
    default_base_url: None,
    default_model: None,
    hosted_web_search: false,
    document_input: false,
    continues_stored_replies: false,
    window_set_per_request: false,
    limits: LimitsSource::Catalog,
    hosting: Hosting::Hosted,
    balance: false,
};

/// The capabilities of a server of one's own: no key, limits asked of the server.
const LOCAL: Capabilities = Capabilities {
    api_key: KeyRequirement::None,
    hosting: Hosting::Local,
    limits: LimitsSource::LocalServer,
    ..HOSTED
};

impl ProviderKind {
    /// What this kind of provider can do and needs.
    pub const fn capabilities(self) -> Capabilities {
        match self {
            ProviderKind::OpenAi => Capabilities {
                api_key_env: Some("OPENAI_API_KEY"),
                default_base_url: Some("https://api.openai.com/v1"),
                default_model: Some("gpt-4.1"),
                ..HOSTED
            },
            ProviderKind::OpenRouter => Capabilities {
                api_key_env: Some("OPENROUTER_API_KEY"),
                default_base_url: Some("https://openrouter.ai/api/v1"),
                default_model: Some("anthropic/claude-sonnet-4"),
                hosted_web_search: true,
                limits: LimitsSource::ModelList,
                balance: true,
                ..HOSTED
            },
            ProviderKind::DeepSeek => Capabilities {
                api_key_env: Some("DEEPSEEK_API_KEY"),
                default_base_url: Some("https://api.deepseek.com/v1"),
                default_model: Some("deepseek-chat"),
                ..HOSTED
            },
            ProviderKind::Anthropic => Capabilities {
                api_key: KeyRequirement::UnlessLocal,
                api_key_env: Some("ANTHROPIC_API_KEY"),
                default_base_url: Some("https://api.anthropic.com"),
                default_model: Some("claude-sonnet-4-20250514"),
                hosted_web_search: true,
                document_input: true,
                hosting: Hosting::ByEndpoint,
                ..HOSTED
            },
            ProviderKind::Responses => Capabilities {
                api_key: KeyRequirement::AtDefaultEndpoint,
                api_key_env: Some("OPENAI_API_KEY"),
                default_base_url: Some("https://api.openai.com/v1"),
                default_model: Some("gpt-4.1"),
                hosted_web_search: true,
                document_input: true,
                continues_stored_replies: true,
                limits: LimitsSource::ModelList,
                hosting: Hosting::ByEndpoint,
                ..HOSTED
            },
            // The models endpoint names each model's input and output limits.
            ProviderKind::Gemini => Capabilities {
                api_key_env: Some("GEMINI_API_KEY"),
                default_base_url: Some("https://generativelanguage.googleapis.com"),
                default_model: Some("gemini-2.5-flash"),
                document_input: true,
                limits: LimitsSource::ModelList,
                ..HOSTED
            },
            // One's own resource: no default endpoint or model (a deployment's name).
            ProviderKind::Azure => Capabilities {
                api_key_env: Some("AZURE_OPENAI_API_KEY"),
                hosting: Hosting::ByEndpoint,
                ..HOSTED
            },
            ProviderKind::AzureResponses => Capabilities {
                api_key_env: Some("AZURE_OPENAI_API_KEY"),
                document_input: true,
                continues_stored_replies: true,
                hosting: Hosting::ByEndpoint,
                ..HOSTED
            },
            // Google credentials, not a key: an access token given as the key is used as it
            // is; otherwise they are found as Google's tools find them.
            ProviderKind::Vertex => Capabilities {
                api_key: KeyRequirement::None,
                default_base_url: Some("https://aiplatform.googleapis.com"),
                default_model: Some("gemini-2.5-flash"),
                document_input: true,
                ..HOSTED
            },
            ProviderKind::VertexAnthropic => Capabilities {
                api_key: KeyRequirement::None,
                default_base_url: Some("https://aiplatform.googleapis.com"),
                default_model: Some("claude-sonnet-4-5@20250929"),
                document_input: true,
                ..HOSTED
            },
            // AWS credentials sign requests; a Bedrock API key, when there is one, is the
            // key. The host is the region's (the default URL names us-east-1's).
            ProviderKind::Bedrock => Capabilities {
                api_key: KeyRequirement::None,
                api_key_env: Some("AWS_BEARER_TOKEN_BEDROCK"),
                default_base_url: Some("https://bedrock-runtime.us-east-1.amazonaws.com"),
                default_model: Some("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
                document_input: true,
                ..HOSTED
            },
            ProviderKind::Ollama => Capabilities {
                default_base_url: Some("http://localhost:11434"),
                default_model: Some("qwen3:14b"),
                window_set_per_request: true,
                ..LOCAL
            },
            ProviderKind::LmStudio => Capabilities {
                default_base_url: Some("http://localhost:1234/v1"),
                ..LOCAL
            },
            ProviderKind::LocalAi => Capabilities {
                default_base_url: Some("http://localhost:8080/v1"),
                ..LOCAL
            },
            ProviderKind::LlamaCpp => Capabilities {
                default_base_url: Some("http://localhost:8080/v1"),
                ..LOCAL
            },
            // vLLM's model list names each model's window (`max_model_len`).
            ProviderKind::Vllm => Capabilities {
                default_base_url: Some("http://localhost:8000/v1"),
                limits: LimitsSource::ModelList,
                ..LOCAL
            },
            ProviderKind::OpenAiCompatible => Capabilities {
                hosting: Hosting::ByEndpoint,
                ..LOCAL
            },
            ProviderKind::Apple => Capabilities {
                api_key: KeyRequirement::None,
                hosting: Hosting::Local,
                ..HOSTED
            },
        }
    }

    /// The base URL used when the config names none (`None` for a custom server); see
    /// [`capabilities`](ProviderKind::capabilities).
    pub fn default_endpoint(self) -> Option<&'static str> {
        self.capabilities().default_base_url
    }

    /// The environment variable the API key is read from when the config has none.
    pub fn api_key_env(self) -> Option<&'static str> {
        self.capabilities().api_key_env
    }

    /// Whether requests fail without an API key (hosted services) or go without one (local
    /// servers), at the kind's own endpoint. The Responses API needs one only at OpenAI's
    /// own endpoint, Anthropic's not at a server of one's own (see
    /// [`Capabilities::needs_api_key`](crate::Capabilities::needs_api_key)).
    pub fn requires_api_key(self) -> bool {
        matches!(
            self.capabilities().api_key,
            KeyRequirement::Always | KeyRequirement::UnlessLocal
        )
    }
}

impl Capabilities {
    /// Whether a request to `endpoint` (the default base URL when `None` or blank) fails
    /// without an API key.
    pub fn needs_api_key(&self, endpoint: Option<&str>) -> bool {
        let endpoint = endpoint.map(str::trim).filter(|url| !url.is_empty());
        match self.api_key {
            KeyRequirement::None => false,
            KeyRequirement::Always => true,
            KeyRequirement::UnlessLocal => !endpoint.is_some_and(is_local),
            KeyRequirement::AtDefaultEndpoint => match (endpoint, self.default_base_url) {
                (None, _) => true,
                (Some(url), Some(default)) => same_host(url, default),
                (Some(_), None) => false,
            },
        }
    }

    /// Whether the server at `endpoint` (the default base URL when `None`) runs on this
    /// machine or the local network. A hosted kind's API pointed at such an address (`-p
    /// openai --endpoint http://127.0.0.1:8080/v1`) is a server of one's own too.
    pub fn runs_locally(&self, endpoint: Option<&str>) -> bool {
        let given = endpoint.map(str::trim).filter(|url| !url.is_empty());
        match self.hosting {
            Hosting::Hosted => given.is_some_and(is_local),
            Hosting::Local => true,
            Hosting::ByEndpoint => given.or(self.default_base_url).is_some_and(is_local),
        }
    }

    /// The model asked for at `endpoint` when nobody chose one: the kind's default at its
    /// service; `None` at a server of one's own reached through a hosted kind's API (its
    /// model is the one it lists, not the service's default).
    pub fn default_model_at(&self, endpoint: Option<&str>) -> Option<&'static str> {
        match self.hosting {
            Hosting::Local => self.default_model,
            Hosting::Hosted | Hosting::ByEndpoint if self.runs_locally(endpoint) => None,
            Hosting::Hosted | Hosting::ByEndpoint => self.default_model,
        }
    }

    /// How the limits of a model at `endpoint` are learned: a server of one's own is asked
    /// (its window, its tokenizer) whatever API it speaks, since no catalog knows how it
    /// was started.
    pub fn limits_at(&self, endpoint: Option<&str>) -> LimitsSource {
        match self.limits {
            LimitsSource::Catalog if self.runs_locally(endpoint) => LimitsSource::LocalServer,
            limits => limits,
        }
    }
}

/// Whether two URLs name the same host.
fn same_host(a: &str, b: &str) -> bool {
    let host = |url: &str| {
        reqwest::Url::parse(url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
    };
    host(a).is_some() && host(a) == host(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosted_services_need_their_key_and_local_servers_none() {
        for (kind, variable) in [
            (ProviderKind::OpenAi, "OPENAI_API_KEY"),
            (ProviderKind::OpenRouter, "OPENROUTER_API_KEY"),
            (ProviderKind::Anthropic, "ANTHROPIC_API_KEY"),
            (ProviderKind::DeepSeek, "DEEPSEEK_API_KEY"),
            (ProviderKind::Responses, "OPENAI_API_KEY"),
            (ProviderKind::Gemini, "GEMINI_API_KEY"),
            (ProviderKind::Azure, "AZURE_OPENAI_API_KEY"),
            (ProviderKind::AzureResponses, "AZURE_OPENAI_API_KEY"),
        ] {
            let capabilities = kind.capabilities();
            assert_eq!(capabilities.api_key_env, Some(variable), "{kind}");
            assert!(capabilities.needs_api_key(None), "{kind}");
            assert!(!capabilities.runs_locally(None), "{kind}");
        }
        for kind in [
            ProviderKind::Ollama,
            ProviderKind::LmStudio,
            ProviderKind::LocalAi,
            ProviderKind::Vllm,
            ProviderKind::LlamaCpp,
        ] {
            let capabilities = kind.capabilities();
            assert!(!capabilities.needs_api_key(None), "{kind}");
            assert_eq!(capabilities.api_key_env, None, "{kind}");
            assert!(capabilities.runs_locally(None), "{kind}");
            assert!(capabilities.default_base_url.is_some(), "{kind}");
        }
    }

    #[test]
    fn some_keys_depend_on_the_endpoint() {
        let anthropic = ProviderKind::Anthropic.capabilities();
        assert!(anthropic.needs_api_key(Some("https://api.example.com")));
        assert!(!anthropic.needs_api_key(Some("http://127.0.0.1:8080")));
        assert!(anthropic.runs_locally(Some("http://localhost:8080/v1/messages")));
        let responses = ProviderKind::Responses.capabilities();
        assert!(responses.needs_api_key(Some("https://api.openai.com/v1")));
        assert!(responses.needs_api_key(Some("  ")));
        assert!(!responses.needs_api_key(Some("http://127.0.0.1:8080/v1")));
        assert!(!responses.needs_api_key(Some("https://llm.example.com/v1")));
        let custom = ProviderKind::OpenAiCompatible.capabilities();
        assert_eq!(custom.default_base_url, None);
        assert!(custom.runs_locally(Some("http://192.168.1.5:8080/v1")));
        assert!(!custom.runs_locally(Some("https://api.groq.com/openai/v1")));
        assert!(!custom.runs_locally(None));
    }

    #[test]
    fn a_hosted_api_at_a_local_address_is_a_server_of_ones_own() {
        let openai = ProviderKind::OpenAi.capabilities();
        assert!(!openai.runs_locally(None));
        assert!(!openai.runs_locally(Some("https://proxy.example.com/v1")));
        assert!(openai.runs_locally(Some("http://127.0.0.1:8080/v1")));
        assert_eq!(openai.limits_at(None), LimitsSource::Catalog);
        assert_eq!(
            openai.limits_at(Some("http://192.168.1.5:8080/v1")),
            LimitsSource::LocalServer
        );
        let openrouter = ProviderKind::OpenRouter.capabilities();
        assert_eq!(
            openrouter.limits_at(Some("http://127.0.0.1:9/api/v1")),
            LimitsSource::ModelList
        );
    }

    #[test]
    fn a_services_default_model_stays_at_the_service() {
        let anthropic = ProviderKind::Anthropic.capabilities();
        assert_eq!(
            anthropic.default_model_at(None),
            Some("claude-sonnet-4-20250514")
        );
        assert_eq!(
            anthropic.default_model_at(Some("https://proxy.example.com")),
            Some("claude-sonnet-4-20250514")
        );
        assert_eq!(
            anthropic.default_model_at(Some("http://127.0.0.1:8080")),
            None
        );
        let openai = ProviderKind::OpenAi.capabilities();
        assert_eq!(
            openai.default_model_at(Some("http://localhost:8080/v1")),
            None
        );
        let ollama = ProviderKind::Ollama.capabilities();
        assert_eq!(
            ollama.default_model_at(Some("http://127.0.0.1:11434")),
            Some("qwen3:14b")
        );
        assert_eq!(
            ProviderKind::LlamaCpp.capabilities().default_model_at(None),
            None
        );
    }

    #[test]
    fn what_each_kind_can_do() {
        let searching: Vec<ProviderKind> = (ProviderKind::ALL.into_iter())
            .filter(|kind| kind.capabilities().hosted_web_search)
            .collect();
        assert_eq!(
            searching,
            [
                ProviderKind::OpenRouter,
                ProviderKind::Anthropic,
                ProviderKind::Responses
            ]
        );
        let documents: Vec<ProviderKind> = (ProviderKind::ALL.into_iter())
            .filter(|kind| kind.capabilities().document_input)
            .collect();
        assert_eq!(
            documents,
            [
                ProviderKind::Anthropic,
                ProviderKind::Responses,
                ProviderKind::Gemini,
                ProviderKind::AzureResponses,
                ProviderKind::Vertex,
                ProviderKind::VertexAnthropic,
                ProviderKind::Bedrock
            ]
        );
        let balance: Vec<ProviderKind> = (ProviderKind::ALL.into_iter())
            .filter(|kind| kind.capabilities().balance)
            .collect();
        assert_eq!(balance, [ProviderKind::OpenRouter]);
        assert!(ProviderKind::Ollama.capabilities().window_set_per_request);
        assert!(
            ProviderKind::Responses
                .capabilities()
                .continues_stored_replies
        );
        assert_eq!(
            ProviderKind::OpenAi.capabilities().limits,
            LimitsSource::Catalog
        );
        assert_eq!(
            ProviderKind::OpenRouter.capabilities().limits,
            LimitsSource::ModelList
        );
        assert_eq!(
            ProviderKind::LlamaCpp.capabilities().limits,
            LimitsSource::LocalServer
        );
    }

    #[test]
    fn hosted_services_have_a_default_model_and_url() {
        for kind in ProviderKind::ALL {
            let capabilities = kind.capabilities();
            if capabilities.hosting == Hosting::Hosted {
                assert!(capabilities.default_model.is_some(), "{kind}");
                assert!(capabilities.default_base_url.is_some(), "{kind}");
            }
        }
    }
}
