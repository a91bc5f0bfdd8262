//! The connected servers as one set: their lists (tools, resources, prompts), asked for
//! again when a server says one changed, reading a resource and getting a prompt.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    GetPromptRequestParams, Prompt, ReadResourceRequestParams, Resource, ResourceContents, Role,
    Tool,
};
use ybs_tools::{ConfirmationPolicy, ToolRegistry};

use super::client::{Changed, List};
use super::connect::{Connected, Service, keep_only};
use super::hub::Hub;
use super::spec::McpServerSpec;
use super::tool::McpTool;

/// One connected server and what it offered when last asked.
pub(super) struct Link {
    spec: McpServerSpec,
    service: Arc<Service>,
    hub: Arc<Hub>,
    changed: Arc<Changed>,
    lists: Mutex<Lists>,
}

#[derive(Default)]
struct Lists {
    /// The registry's names of its tools.
    tool_names: Vec<String>,
    /// `None`: it offers no resources.
    resources: Option<Vec<Resource>>,
    prompts: Vec<Prompt>,
}

/// A server's counts, for `ybs mcp list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSummary {
    /// The server's name.
    pub name: String,
    /// How many tools it offers (after `tools`).
    pub tools: usize,
    /// How many resources it lists.
    pub resources: usize,
    /// How many prompts it offers.
    pub prompts: usize,
}

/// One resource of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// The server's name.
    pub server: String,
    /// Its URI, as the server reads it.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// What it is, when the server says.
    pub description: Option<String>,
    /// Its MIME type, when the server says.
    pub mime_type: Option<String>,
}

/// One prompt of a server, offered as `/SERVER:PROMPT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// The server's name.
    pub server: String,
    /// The prompt's name.
    pub name: String,
    /// What it does, when the server says.
    pub description: Option<String>,
    /// Its arguments in order, each with whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// Who said a message of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// Why a resource or a prompt could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpRequestError {
    /// No connected server has this name.
    #[error("no connected MCP server is called `{0}`")]
    NoServer(String),
    /// The server answered with an error, or not at all.
    #[error("MCP server `{server}` failed: {message}")]
    Failed {
        /// The server's name.
        server: String,
        /// What went wrong.
        message: String,
    },
}

/// The servers an agent is connected to; clones share them.
#[derive(Clone, Default)]
pub struct McpServers {
    links: Vec<Arc<Link>>,
}

impl McpServers {
    pub(super) fn link(
        connected: &Connected,
        hub: &Arc<Hub>,
        tool_names: Vec<String>,
    ) -> Arc<Link> {
        Arc::new(Link {
            spec: connected.spec.clone(),
            service: connected.service.clone(),
            hub: hub.clone(),
            changed: connected.changed.clone(),
            lists: Mutex::new(Lists {
                tool_names,
                resources: connected.resources.clone(),
                prompts: connected.prompts.clone(),
            }),
        })
    }

    pub(super) fn push(&mut self, link: Arc<Link>) {
        self.links.push(link);
    }

    /// Adds the servers of `other`.
    pub fn extend(&mut self, other: McpServers) {
        self.links.extend(other.links);
    }

    /// Whether no server is connected.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Whether a server offers resources (the resource tool is then offered).
    pub fn any_resources(&self) -> bool {
        (self.links.iter()).any(|link| link.with_lists(|lists| lists.resources.is_some()))
    }

    fn find(&self, server: &str) -> Result<&Arc<Link>, McpRequestError> {
        (self.links.iter())
            .find(|link| link.spec.name == server)
            .ok_or_else(|| McpRequestError::NoServer(server.to_owned()))
    }

    /// Each server's counts, in connection order.
    pub fn summaries(&self) -> Vec<ServerSummary> {
        (self.links.iter())
            .map(|link| {
                link.with_lists(|lists| ServerSummary {
                    name: link.spec.name.clone(),
                    tools: lists.tool_names.len(),
                    resources: lists.resources.as_ref().map_or(0, Vec::len),
                    prompts: lists.prompts.len(),
                })
            })
            .collect()
    }

    /// The resources of `server` (all servers when `None`), read again from a server that
    /// said its list changed.
    pub fn resources(&self, server: Option<&str>) -> Result<Vec<ResourceInfo>, McpRequestError> {
        let links: Vec<&Arc<Link>> = match server {
            Some(name) => vec![self.find(name)?],
            None => self.links.iter().collect(),
        };
        let mut all = Vec::new();
        for link in links {
            link.refresh_other_lists();
            link.with_lists(|lists| {
                for resource in lists.resources.iter().flatten() {
                    all.push(ResourceInfo {
                        server: link.spec.name.clone(),
                        uri: resource.uri.clone(),
                        name: resource.name.clone(),
                        description: resource.description.clone(),
                        mime_type: resource.mime_type.clone(),
                    });
                }
            });
        }
        Ok(all)
    }

    /// The text of resource `uri` of `server` (its parts joined; binary parts described).
    pub fn read_resource(&self, server: &str, uri: &str) -> Result<String, McpRequestError> {
        let link = self.find(server)?;
        let service = link.service.clone();
        let params = ReadResourceRequestParams::new(uri);
        let timeout = link.spec.tool_timeout;
        let read =
            async move { tokio::time::timeout(timeout, service.read_resource(params)).await };
        let result = link.run(read)?;
        let parts: Vec<String> = (result.contents.iter())
            .map(|contents| match contents {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                ResourceContents::BlobResourceContents { uri, blob, .. } => {
                    format!("[resource {uri}, {} base64 bytes]", blob.len())
                }
                _ => "[a resource of a kind ybs does not know]".to_owned(),
            })
            .collect();
        Ok(parts.join("\n"))
    }

    /// Every server's prompts, read again from a server that said its list changed.
    pub fn prompts(&self) -> Vec<PromptInfo> {
        let mut all = Vec::new();
        for link in &self.links {
            link.refresh_other_lists();
            link.with_lists(|lists| {
                for prompt in &lists.prompts {
                    all.push(PromptInfo {
                        server: link.spec.name.clone(),
                        name: prompt.name.clone(),
                        description: prompt.description.clone(),
                        arguments: (prompt.arguments.iter().flatten())
                            .map(|arg| (arg.name.clone(), arg.required == Some(true)))
                            .collect(),
                    });
                }
            });
        }
        all
    }

    /// The messages of prompt `name` of `server` with `arguments`, as text.
    pub fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<Vec<(PromptRole, String)>, McpRequestError> {
        let link = self.find(server)?;
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(
                (arguments.iter())
                    .map(|(key, value)| (key.clone(), serde_json::Value::String(value.clone())))
                    .collect(),
            );
        }
        let service = link.service.clone();
        let timeout = link.spec.tool_timeout;
        let get = async move { tokio::time::timeout(timeout, service.get_prompt(params)).await };
        let result = link.run(get)?;
        Ok((result.messages.iter())
            .map(|message| {
                let role = match message.role {
                    Role::Assistant => PromptRole::Assistant,
                    _ => PromptRole::User,
                };
                (role, super::tool::content_text(&message.content))
            })
            .collect())
    }

    /// Asks the servers that said their tools changed for them again and puts the new
    /// list in `registry` in place of the old; returns one line per server that changed.
    pub fn refresh_tools(
        &self,
        registry: &mut ToolRegistry,
        policy: &mut ConfirmationPolicy,
    ) -> Vec<String> {
        let mut said = Vec::new();
        for link in &self.links {
            if !link.changed.take(List::Tools) {
                continue;
            }
            let service = link.service.clone();
            let timeout = link.spec.startup_timeout;
            let list = async move { tokio::time::timeout(timeout, service.list_all_tools()).await };
            let mut tools: Vec<Tool> = match link.run(list) {
                Ok(tools) => tools,
                Err(error) => {
                    said.push(format!("cannot list the new tools: {error}"));
                    continue;
                }
            };
            keep_only(&link.spec.only, &mut tools);
            let old = link.with_lists(|lists| std::mem::take(&mut lists.tool_names));
            for name in &old {
                registry.unregister(name);
            }
            let added = McpTool::of(&link.spec, &link.service, tools, &link.hub);
            let names = super::tool::register_tools(added, registry, policy, &mut Vec::new());
            said.push(format!(
                "MCP server `{}` changed its tools; it now offers {}",
                link.spec.name,
                ybs_tools::summary::counted(names.len() as u64, "tool", "tools")
            ));
            link.with_lists(|lists| lists.tool_names = names);
        }
        said
    }
}

impl Link {
    fn with_lists<T>(&self, f: impl FnOnce(&mut Lists) -> T) -> T {
        let mut lists = self
            .lists
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut lists)
    }

    /// Runs a request of this server with a timeout, its failure in words.
    fn run<T, E>(
        &self,
        request: impl std::future::Future<Output = Result<Result<T, E>, tokio::time::error::Elapsed>>
        + Send
        + 'static,
    ) -> Result<T, McpRequestError>
    where
        T: Send + 'static,
        E: std::error::Error + Send + 'static,
    {
        let failed = |message: String| McpRequestError::Failed {
            server: self.spec.name.clone(),
            message,
        };
        match self.hub.block_on(request) {
            Some(Ok(Ok(value))) => Ok(value),
            Some(Ok(Err(error))) => Err(failed(super::http_failure::describe(&error))),
            Some(Err(_)) => Err(failed(format!(
                "no answer within {} s",
                self.spec.tool_timeout.as_secs()
            ))),
            None => Err(failed("the connection is closed".to_owned())),
        }
    }

    /// Reads the resources and prompts again when the server said they changed.
    fn refresh_other_lists(&self) {
        let resources = self.changed.take(List::Resources);
        let prompts = self.changed.take(List::Prompts);
        if !resources && !prompts {
            return;
        }
        let service = self.service.clone();
        let lists = async move { super::connect::other_lists(&service).await };
        if let Some((new_resources, new_prompts)) = self.hub.block_on(lists) {
            self.with_lists(|lists| {
                if resources {
                    lists.resources = new_resources;
                }
                if prompts {
                    lists.prompts = new_prompts;
                }
            });
        }
    }
}
