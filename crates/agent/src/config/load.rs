//! Loading: defaults, the five configuration files, environment variables, flags.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::env::apply_env;
use super::error::{ConfigError, ConfigWarning};
use super::file;
use super::merge::{merge_object, set_path};
use super::paths::{ConfigFile, ConfigLocations, FileRole, expand_tilde};
use super::risk::{Setting, UntrustedFile, drop_changes_to_users_endpoints, take_untrusted};
use super::schema::Config;
use super::source::{Source, Sources};
use super::trust::{Trust, digest};
use super::validate::validate;

/// The command-line flags that override configuration keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlagOverrides {
    /// `--config FILE`: read last of the files.
    pub config_file: Option<PathBuf>,
    /// `-m/--model`: `llm.model`.
    pub model: Option<String>,
    /// `-p/--provider`: `llm.provider`.
    pub provider: Option<String>,
    /// `--endpoint`: `llm.endpoint`.
    pub endpoint: Option<String>,
    /// `--no-sandbox`: `safety.sandbox_enabled = false`.
    pub no_sandbox: bool,
    /// `--reasoning-effort`: `llm.reasoning_effort`.
    pub reasoning_effort: Option<String>,
    /// `--approval`: `safety.approval`.
    pub approval: Option<String>,
    /// `--network`: `safety.network`.
    pub network: Option<String>,
}

/// Whether a configuration file was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatus {
    /// The file.
    pub file: ConfigFile,
    /// Whether it existed and was merged.
    pub loaded: bool,
}

/// The effective configuration with the source of every value.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The typed configuration, `~` expanded.
    pub config: Config,
    /// Where each value that is not a default came from.
    pub sources: Sources,
    /// Unknown keys, variables and versions.
    pub warnings: Vec<ConfigWarning>,
    /// The files considered, in order.
    pub files: Vec<FileStatus>,
    /// The project files whose settings that need trust were not applied, and the project's
    /// extension files (skills) waiting for trust.
    pub untrusted: Vec<UntrustedFile>,
    /// The skills of the user and, where trusted, of the project.
    pub extensions: crate::extensions::Extensions,
}

/// Builds the configuration: defaults, then each file of `locations` (plus
/// `flags.config_file`), merged key by key, then `env` (`YBS_*` variables named after key
/// paths, a few short aliases, `NO_COLOR`), then `flags`. Of a project file (`.ybs.json` in
/// the project), the settings that run a program, send data elsewhere or weaken safety are
/// applied only when `trust` allows them; the others are listed in
/// [`LoadedConfig::untrusted`].
pub fn load(
    locations: &ConfigLocations,
    env: &BTreeMap<String, String>,
    flags: &FlagOverrides,
    trust: &Trust,
) -> Result<LoadedConfig, ConfigError> {
    let defaults = defaults();
    let mut merged = defaults.clone();
    let mut sources = Sources::default();
    let mut warnings = Vec::new();
    let mut files = Vec::new();
    let mut untrusted = Vec::new();
    let mut layers = Vec::new();
    for config_file in locations.files(flags.config_file.as_deref()) {
        let parsed = match read(&config_file)? {
            Some(text) => Some(file::parse(&config_file.path, &text)?),
            None => None,
        };
        layers.push((config_file, parsed));
    }
    let users_own = UsersOwn {
        explicit: (layers.iter())
            .filter(|(file, _)| file.role == FileRole::Explicit)
            .filter_map(|(file, parsed)| Some((file.source(), parsed.as_ref()?.value.clone())))
            .collect(),
        env,
        flags,
        defaults: &defaults,
    };
    for (config_file, parsed) in layers {
        let Some(mut parsed) = parsed else {
            files.push(FileStatus {
                file: config_file,
                loaded: false,
            });
            continue;
        };
        warnings.extend(std::mem::take(&mut parsed.warnings));
        if config_file.role == FileRole::Project {
            let users = users_own.over(&merged);
            let kept = drop_changes_to_users_endpoints(&mut parsed.value, &users);
            warnings.extend(
                kept.into_iter()
                    .map(|name| ConfigWarning::UsersEndpointKept {
                        path: config_file.path.clone(),
                        name,
                    }),
            );
            let whole = parsed.value.clone();
            let settings = take_untrusted(&mut parsed.value, &users, &defaults);
            if !settings.is_empty() {
                // Trust is recorded for everything in the file that needs it against the
                // user's own files, not only what this run's flags and environment leave:
                // `ybs trust` then holds for a run with `--provider` or `-c FILE` too.
                let recorded = take_untrusted(&mut whole.clone(), &merged, &defaults);
                let digest = digest(&fingerprint(&recorded));
                if trust.allows(&config_file.path, &digest) {
                    parsed.value = whole;
                } else {
                    untrusted.push(UntrustedFile {
                        path: config_file.path.clone(),
                        digest,
                        settings,
                        recorded,
                    });
                }
            }
        }
        merge_object(
            &mut merged,
            parsed.value,
            "",
            &config_file.source(),
            &mut sources,
        );
        files.push(FileStatus {
            file: config_file,
            loaded: true,
        });
    }
    warnings.extend(apply_env(env, &defaults, &mut merged, &mut sources)?);
    apply_flags(flags, &mut merged, &mut sources);
    let mut config = typed(merged, &sources)?;
    expand_paths(&mut config, locations.home.as_deref());
    validate(&config, &sources)?;
    let (extensions, waiting) = crate::extensions::discover(locations, trust);
    untrusted.extend(waiting);
    Ok(LoadedConfig {
        config,
        sources,
        warnings,
        files,
        untrusted,
        extensions,
    })
}

/// What the user chose that applies after the project files: `-c FILE`, the environment and
/// the flags. A project's setting is judged against the configuration with these on top, so a
/// value the user set themselves (in any of their own places) needs no trust.
struct UsersOwn<'a> {
    explicit: Vec<(Source, Map<String, Value>)>,
    env: &'a BTreeMap<String, String>,
    flags: &'a FlagOverrides,
    defaults: &'a Map<String, Value>,
}

impl UsersOwn<'_> {
    /// `merged` (the configuration before a project file) with the user's later choices on
    /// top.
    fn over(&self, merged: &Map<String, Value>) -> Map<String, Value> {
        let mut view = merged.clone();
        let mut scratch = Sources::default();
        for (source, layer) in &self.explicit {
            merge_object(&mut view, layer.clone(), "", source, &mut scratch);
        }
        // A bad variable is reported by the real load below.
        let _ = apply_env(self.env, self.defaults, &mut view, &mut scratch);
        apply_flags(self.flags, &mut view, &mut scratch);
        view
    }
}

/// The text a file's settings that need trust are recorded by: each key and its value.
pub fn fingerprint(settings: &[Setting]) -> String {
    let pairs: Vec<(&str, &Value)> = (settings.iter())
        .map(|setting| (setting.key.as_str(), &setting.value))
        .collect();
    serde_json::to_string(&pairs).unwrap_or_default()
}

/// The defaults as JSON: the base every layer merges into, and the schema of the
/// environment variables.
pub fn defaults() -> Map<String, Value> {
    match serde_json::to_value(Config::default()) {
        Ok(Value::Object(map)) => map,
        // Config serializes to an object with string keys; nothing else can happen.
        _ => Map::new(),
    }
}

/// The largest configuration file read (real ones are a few kilobytes).
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The file's text; `None` when an optional file does not exist. A project's `.ybs.json`
/// that is a directory is the empty placeholder a running command holds the name with (see
/// the tools' shell sandbox), or one a killed ybs left: no configuration.
fn read(config_file: &ConfigFile) -> Result<Option<String>, ConfigError> {
    // A repository's `.ybs.json` is input: a link in its place is not followed. No file is
    // read unless it is a regular one (a FIFO would hang, `/dev/zero` fill memory), nor past
    // the cap.
    let links = match config_file.role {
        FileRole::Project => ybs_fsguard::Links::Refuse,
        _ => ybs_fsguard::Links::Follow,
    };
    let text = ybs_fsguard::read_file(&config_file.path, MAX_CONFIG_BYTES, links)
        .and_then(|read| read.into_text(MAX_CONFIG_BYTES));
    match text {
        Ok(text) => Ok(Some(text)),
        Err(err)
            if err.kind() == ErrorKind::IsADirectory && config_file.role == FileRole::Project =>
        {
            Ok(None)
        }
        Err(err) if err.kind() == ErrorKind::NotFound => match config_file.role {
            FileRole::Explicit => Err(ConfigError::MissingExplicit {
                path: config_file.path.clone(),
            }),
            _ => Ok(None),
        },
        Err(source) => Err(ConfigError::Read {
            path: config_file.path.clone(),
            source,
        }),
    }
}

fn apply_flags(flags: &FlagOverrides, merged: &mut Map<String, Value>, sources: &mut Sources) {
    let strings = [
        ("llm.model", "--model", &flags.model),
        ("llm.provider", "--provider", &flags.provider),
        ("llm.endpoint", "--endpoint", &flags.endpoint),
        (
            "llm.reasoning_effort",
            "--reasoning-effort",
            &flags.reasoning_effort,
        ),
        ("safety.approval", "--approval", &flags.approval),
        ("safety.network", "--network", &flags.network),
    ];
    for (key, flag, value) in strings {
        if let Some(value) = value {
            set_path(
                merged,
                key,
                Value::String(value.clone()),
                Source::Flag(flag),
                sources,
            );
        }
    }
    if flags.no_sandbox {
        set_path(
            merged,
            "safety.sandbox_enabled",
            Value::Bool(false),
            Source::Flag("--no-sandbox"),
            sources,
        );
    }
}

/// The merged JSON as a [`Config`]. Each layer was type-checked on its own, so this fails
/// only for a value a layer could not check (none today); the error still names the key.
fn typed(merged: Map<String, Value>, sources: &Sources) -> Result<Config, ConfigError> {
    let merged = Value::Object(merged);
    serde_path_to_error::deserialize(&merged).map_err(|err| {
        let key = err.path().to_string();
        let value = key
            .split('.')
            .try_fold(&merged, |value, name| value.get(name))
            .map_or_else(|| String::from("(missing)"), ToString::to_string);
        ConfigError::Invalid {
            origin: sources.of(&key).clone(),
            key,
            value,
            rule: err.into_inner().to_string(),
        }
    })
}

fn expand_paths(config: &mut Config, home: Option<&Path>) {
    let expand = |path: &mut String| *path = expand_tilde(path, home);
    config
        .safety
        .sandbox_allowed_paths
        .iter_mut()
        .for_each(expand);
    config
        .safety
        .sandbox_blocked_paths
        .iter_mut()
        .for_each(expand);
    for tool in &mut config.tools.external {
        expand(&mut tool.path);
    }
    for server in config.mcp.servers.values_mut() {
        if let Some(command) = &mut server.command {
            expand(command);
        }
    }
}
