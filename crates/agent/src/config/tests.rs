//! Tests of [`load`] against files in a temporary directory.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    locations: ConfigLocations,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("tempdir: {err}"));
        let root = dir.path().to_owned();
        let locations = ConfigLocations {
            system_file: root.join("etc/ybs/config.json"),
            home: Some(root.join("home")),
            xdg_config_home: None,
            cwd: root.join("project"),
        };
        Fixture {
            _dir: dir,
            root,
            locations,
        }
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.root.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap_or_else(|err| panic!("mkdir: {err}"));
        }
        fs::write(&path, text).unwrap_or_else(|err| panic!("write: {err}"));
        path
    }

    fn load(&self, env: &[(&str, &str)], flags: &FlagOverrides) -> Result<LoadedConfig, String> {
        let env: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let trust = super::Trust {
            everything: true,
            ..super::Trust::default()
        };
        load(&self.locations, &env, flags, &trust).map_err(|err| err.to_string())
    }
}

fn file(path: &Path) -> Source {
    Source::File(path.to_owned())
}

#[test]
fn without_files_everything_is_the_spec_default() -> Result<(), String> {
    let fixture = Fixture::new();
    let loaded = fixture.load(&[], &FlagOverrides::default())?;
    let mut expected = Config::default();
    let home = fixture.root.join("home");
    expected.safety.sandbox_blocked_paths = [".ssh", ".aws", ".config"]
        .iter()
        .map(|dir| home.join(dir).to_string_lossy().into_owned())
        .collect();
    assert_eq!(loaded.config, expected);
    assert_eq!(loaded.config.llm.provider, "ollama");
    assert_eq!(loaded.config.llm.model, "qwen3:14b");
    assert_eq!(loaded.config.context.max_tokens, None);
    assert_eq!(loaded.config.agent.max_iterations, 25);
    assert_eq!(
        loaded.config.tools.builtin.run_shell.timeout_seconds,
        Some(30)
    );
    assert_eq!(loaded.config.git.commit_message_prefix, "[ybs]");
    assert!(loaded.warnings.is_empty());
    assert_eq!(loaded.files.len(), 4);
    assert!(loaded.files.iter().all(|status| !status.loaded));
    assert_eq!(loaded.sources.of("llm.model"), &Source::Default);
    Ok(())
}

#[test]
fn files_merge_in_order_key_by_key() -> Result<(), String> {
    let fixture = Fixture::new();
    let system = fixture.write(
        "etc/ybs/config.json",
        r#"{"llm": {"provider": "openai", "model": "sys-model", "temperature": 0.1}}"#,
    );
    let user = fixture.write(
        "home/.config/ybs/config.json",
        r#"{"llm": {"model": "user-model"}, "ui": {"color": false}}"#,
    );
    let shorthand = fixture.write("home/.ybs.json", r#"{"agent": {"max_iterations": 5}}"#);
    let project = fixture.write(
        "project/.ybs.json",
        r#"{"llm": {"model": "project-model"}, "agent": {"retry_attempts": 9}}"#,
    );
    let explicit = fixture.write("elsewhere/x.json", r#"{"agent": {"max_iterations": 6}}"#);
    let flags = FlagOverrides {
        config_file: Some(explicit.clone()),
        ..FlagOverrides::default()
    };
    let loaded = fixture.load(&[], &flags)?;
    let config = &loaded.config;
    assert_eq!(config.llm.provider, "openai");
    assert_eq!(config.llm.model, "project-model");
    assert_eq!(config.llm.temperature, 0.1);
    assert!(!config.ui.color);
    assert!(config.ui.show_tool_calls);
    assert_eq!(config.agent.max_iterations, 6);
    assert_eq!(config.agent.retry_attempts, 9);
    assert_eq!(config.agent.retry_backoff_base_ms, 1000);
    let sources = &loaded.sources;
    assert_eq!(sources.of("llm.provider"), &file(&system));
    assert_eq!(sources.of("llm.temperature"), &file(&system));
    assert_eq!(sources.of("llm.model"), &file(&project));
    assert_eq!(sources.of("ui.color"), &file(&user));
    assert_eq!(sources.of("agent.max_iterations"), &file(&explicit));
    assert_eq!(sources.of("agent.retry_attempts"), &file(&project));
    assert_eq!(sources.of("ui.show_tool_calls"), &Source::Default);
    assert!(loaded.files.iter().all(|status| status.loaded));
    assert_eq!(loaded.files[2].file.path, shorthand);
    Ok(())
}

#[test]
fn env_overrides_files_and_flags_override_env() -> Result<(), String> {
    let fixture = Fixture::new();
    fixture.write(
        "project/.ybs.json",
        r#"{"llm": {"model": "file", "provider": "file", "endpoint": "http://file"}}"#,
    );
    let flags = FlagOverrides {
        model: Some("flag-model".into()),
        no_sandbox: true,
        ..FlagOverrides::default()
    };
    let loaded = fixture.load(
        &[("YBS_MODEL", "env-model"), ("YBS_PROVIDER", "anthropic")],
        &flags,
    )?;
    assert_eq!(loaded.config.llm.model, "flag-model");
    assert_eq!(loaded.sources.of("llm.model"), &Source::Flag("--model"));
    assert_eq!(loaded.config.llm.provider, "anthropic");
    assert_eq!(
        loaded.sources.of("llm.provider"),
        &Source::Env("YBS_PROVIDER".into())
    );
    assert_eq!(loaded.config.llm.endpoint.as_deref(), Some("http://file"));
    assert!(!loaded.config.safety.sandbox_enabled);
    assert_eq!(
        loaded.sources.of("safety.sandbox_enabled"),
        &Source::Flag("--no-sandbox")
    );
    Ok(())
}

#[test]
fn xdg_config_home_is_honoured_for_the_user_file() -> Result<(), String> {
    let mut fixture = Fixture::new();
    let xdg = fixture.write("xdg/ybs/config.json", r#"{"llm": {"model": "xdg"}}"#);
    fixture.write(
        "home/.config/ybs/config.json",
        r#"{"llm": {"model": "dot-config"}}"#,
    );
    fixture.locations.xdg_config_home = Some(fixture.root.join("xdg"));
    let loaded = fixture.load(&[], &FlagOverrides::default())?;
    assert_eq!(loaded.config.llm.model, "xdg");
    assert_eq!(loaded.sources.of("llm.model"), &file(&xdg));
    Ok(())
}

#[test]
fn tildes_expand_in_paths() -> Result<(), String> {
    let fixture = Fixture::new();
    fixture.write(
        "project/.ybs.json",
        r#"{"tools": {"external": [{"name": "w", "path": "~/.ybs/tools/w"}]},
            "mcp": {"servers": {"s": {"command": "~/bin/s"}}}}"#,
    );
    let loaded = fixture.load(&[], &FlagOverrides::default())?;
    let home = fixture.root.join("home");
    let config = &loaded.config;
    assert_eq!(
        config.safety.sandbox_blocked_paths[0],
        home.join(".ssh").to_string_lossy()
    );
    assert_eq!(config.safety.sandbox_allowed_paths, ["./"]);
    assert_eq!(
        config.tools.external[0].path,
        home.join(".ybs/tools/w").to_string_lossy()
    );
    assert_eq!(
        config.mcp.servers["s"].command.as_deref(),
        Some(home.join("bin/s").to_string_lossy().as_ref())
    );
    Ok(())
}

#[test]
fn unknown_keys_are_collected_from_every_file() -> Result<(), String> {
    let fixture = Fixture::new();
    let user = fixture.write("home/.ybs.json", r#"{"llm": {"modle": "x"}}"#);
    let project = fixture.write("project/.ybs.json", r#"{"uii": {}}"#);
    let loaded = fixture.load(&[("YBS_NOPE", "1")], &FlagOverrides::default())?;
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            format!("{}: unknown key llm.modle (ignored)", user.display()),
            format!("{}: unknown key uii (ignored)", project.display()),
            "environment variable YBS_NOPE is not a ybs setting (ignored); `ybs config` lists the keys"
                .to_owned(),
        ]
    );
    Ok(())
}

#[test]
fn a_malformed_file_is_an_error_naming_file_line_and_column() {
    let fixture = Fixture::new();
    let path = fixture.write(
        "home/.ybs.json",
        "{\n  \"llm\": {\n    \"model\" \"x\"\n  }\n}\n",
    );
    assert_eq!(
        fixture.load(&[], &FlagOverrides::default()).err(),
        Some(format!(
            "{}:3:13: malformed config file: expected `:`",
            path.display()
        ))
    );
}

#[test]
fn a_missing_explicit_file_is_an_error_but_missing_others_are_not() {
    let fixture = Fixture::new();
    let flags = FlagOverrides {
        config_file: Some(PathBuf::from("nope.json")),
        ..FlagOverrides::default()
    };
    assert_eq!(
        fixture.load(&[], &flags).err(),
        Some(format!(
            "config file {} (given with --config) does not exist",
            fixture.root.join("project/nope.json").display()
        ))
    );
}

#[test]
fn an_unreadable_file_names_the_file() {
    let fixture = Fixture::new();
    // (A project's `.ybs.json` that is a directory is a command's placeholder: no file.)
    let dir = fixture.root.join("home/.ybs.json");
    fs::create_dir_all(&dir).unwrap_or_else(|err| panic!("mkdir: {err}"));
    let err = fixture
        .load(&[], &FlagOverrides::default())
        .err()
        .unwrap_or_default();
    assert!(
        err.starts_with(&format!("cannot read config file {}: ", dir.display())),
        "{err}"
    );
}

#[test]
fn an_invalid_value_names_its_source() {
    let fixture = Fixture::new();
    let path = fixture.write(
        "project/.ybs.json",
        r#"{"context": {"compaction_threshold": 1.5}}"#,
    );
    assert_eq!(
        fixture.load(&[], &FlagOverrides::default()).err(),
        Some(format!(
            "context.compaction_threshold = 1.5 (from {}) is invalid: it must be above 0 and at \
             most 1 (a fraction of context.max_tokens)",
            path.display()
        ))
    );
    assert_eq!(
        fixture
            .load(&[("YBS_LLM_TEMPERATURE", "3")], &FlagOverrides::default())
            .err(),
        Some(
            "llm.temperature = 3.0 (from env YBS_LLM_TEMPERATURE) is invalid: it must be between \
             0 and 2"
                .to_owned()
        )
    );
}

#[test]
fn an_env_value_too_large_for_its_key_names_the_variable() {
    let fixture = Fixture::new();
    assert_eq!(
        fixture
            .load(
                &[("YBS_LLM_MAX_TOKENS", "99999999999")],
                &FlagOverrides::default()
            )
            .err(),
        Some(
            "llm.max_tokens = 99999999999 (from env YBS_LLM_MAX_TOKENS) is invalid: invalid \
             value: integer `99999999999`, expected u32"
                .to_owned()
        )
    );
}

#[test]
fn show_lists_every_value_with_its_source_and_masks_keys() -> Result<(), String> {
    let fixture = Fixture::new();
    let project = fixture.write(
        "project/.ybs.json",
        r#"{"llm": {"provider": "openai", "api_key": "sk-test-1234567890abcdef"}}"#,
    );
    let flags = FlagOverrides {
        model: Some("gpt-test".into()),
        ..FlagOverrides::default()
    };
    let loaded = fixture.load(&[("YBS_UI_COLOR", "false")], &flags)?;
    let text = show(&loaded);
    let line = |key: &str| {
        text.lines()
            .find(|line| line.starts_with(&format!("{key} = ")))
            .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert_eq!(
        line("llm.provider"),
        format!("llm.provider = \"openai\" # {}", project.display())
    );
    assert_eq!(
        line("llm.api_key"),
        format!("llm.api_key = \"***cdef\" # {}", project.display())
    );
    assert_eq!(line("llm.model"), "llm.model = \"gpt-test\" # flag --model");
    assert_eq!(line("ui.color"), "ui.color = false # env YBS_UI_COLOR");
    assert_eq!(
        line("llm.endpoint"),
        "llm.endpoint = null # default (the provider's own endpoint)"
    );
    assert_eq!(
        line("safety.require_confirmation"),
        "safety.require_confirmation = [\"write_file\",\"run_shell\",\"delete_file\"] # default"
    );
    assert!(!text.contains("1234567890"));
    assert!(text.starts_with("# Configuration files, in order (later ones win):\n"));
    assert!(text.contains(&format!("#   {}\n", project.display())));
    assert!(text.contains(&format!(
        "#   {} (not found)\n",
        fixture.root.join("home/.ybs.json").display()
    )));
    Ok(())
}

#[test]
fn a_project_setting_equal_to_the_users_own_needs_no_trust() -> Result<(), String> {
    let fixture = Fixture::new();
    let explicit = fixture.write(
        "elsewhere/mine.json",
        r#"{"llm": {"provider": "openai-compatible", "endpoint": "http://127.0.0.1:9/v1"},
            "mcp": {"servers": {"docs": {"url": "http://127.0.0.1:9/mcp"}}}}"#,
    );
    fixture.write(
        "project/.ybs.json",
        r#"{"llm": {"provider": "openai-compatible", "endpoint": "http://127.0.0.1:9/v1",
                    "model": "m"},
            "mcp": {"servers": {"docs": {"url": "http://127.0.0.1:9/mcp"}}},
            "safety": {"approval": "full-auto"}}"#,
    );
    let untrusted = |flags: &FlagOverrides| -> Result<Vec<String>, String> {
        let env = BTreeMap::new();
        let loaded = load(&fixture.locations, &env, flags, &super::Trust::default())
            .map_err(|err| err.to_string())?;
        Ok((loaded.untrusted.iter())
            .flat_map(|file| file.settings.iter().map(|setting| setting.key.clone()))
            .collect())
    };
    // Without the user's `-c FILE` every one of them sends data or weakens safety.
    assert_eq!(
        untrusted(&FlagOverrides::default())?,
        [
            "llm.provider",
            "llm.endpoint",
            "safety.approval",
            "mcp.servers.docs"
        ]
    );
    // With it (read after the project file), the ones equal to the user's need no trust.
    let mut flags = FlagOverrides {
        config_file: Some(explicit),
        ..FlagOverrides::default()
    };
    assert_eq!(untrusted(&flags)?, ["safety.approval"]);
    // A flag is the user's choice too.
    flags.approval = Some("full-auto".into());
    assert!(untrusted(&flags)?.is_empty());
    Ok(())
}

#[test]
fn trust_given_without_flags_holds_with_them_and_the_other_way_round() -> Result<(), String> {
    let fixture = Fixture::new();
    fixture.write(
        "project/.ybs.json",
        r#"{"llm": {"provider": "openai-compatible", "endpoint": "http://127.0.0.1:9/v1"},
            "safety": {"approval": "full-auto"}}"#,
    );
    let env = BTreeMap::new();
    let load_with = |flags: &FlagOverrides, trust: &super::Trust| {
        load(&fixture.locations, &env, flags, trust).map_err(|err| err.to_string())
    };
    let provider_flag = FlagOverrides {
        provider: Some("openai-compatible".into()),
        ..FlagOverrides::default()
    };
    for (asked_with, run_with) in [
        (FlagOverrides::default(), provider_flag.clone()),
        (provider_flag.clone(), FlagOverrides::default()),
    ] {
        let asked = load_with(&asked_with, &super::Trust::default())?;
        let [file] = asked.untrusted.as_slice() else {
            return Err(format!("{:?}", asked.untrusted));
        };
        // What trusting covers is the same whatever the flags; what this run leaves out
        // is what they do not override.
        let keys = |settings: &[super::risk::Setting]| -> Vec<String> {
            settings.iter().map(|setting| setting.key.clone()).collect()
        };
        assert_eq!(
            keys(&file.recorded),
            ["llm.provider", "llm.endpoint", "safety.approval"]
        );
        let left_out = keys(&file.settings);
        assert_eq!(
            left_out.contains(&"llm.provider".to_owned()),
            asked_with.provider.is_none()
        );
        // A recorded setting the flags override is one this run does not leave out.
        let overridden = (file.recorded.iter()).any(|setting| !left_out.contains(&setting.key));
        assert_eq!(overridden, asked_with.provider.is_some());
        // Trusted as asked, then run with other flags: every setting applies.
        let mut store = super::TrustStore::default();
        store.allow_for_tests(&file.path, &file.digest);
        let trust = super::Trust {
            everything: false,
            store,
        };
        let run = load_with(&run_with, &trust)?;
        assert!(run.untrusted.is_empty(), "{:?}", run.untrusted);
        assert_eq!(run.config.safety.approval.name(), "full-auto");
        assert_eq!(
            run.config.llm.endpoint.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
    }
    Ok(())
}

#[test]
fn a_project_file_that_is_a_directory_is_no_configuration() -> Result<(), String> {
    let fixture = Fixture::new();
    fs::create_dir_all(fixture.root.join("project/.ybs.json"))
        .unwrap_or_else(|err| panic!("mkdir: {err}"));
    let loaded = fixture.load(&[], &FlagOverrides::default())?;
    assert!(loaded.files.iter().all(|status| !status.loaded));
    Ok(())
}

#[test]
fn a_project_file_that_is_a_link_a_fifo_or_dev_zero_is_refused_without_hanging() {
    let fixture = Fixture::new();
    let secret = fixture.write("outside/settings.json", r#"{"llm": {"model": "planted"}}"#);
    fs::create_dir_all(&fixture.locations.cwd).unwrap_or_else(|err| panic!("mkdir: {err}"));
    let project_file = fixture.locations.cwd.join(".ybs.json");
    let attempts = [
        ("is a symbolic link", "a link out"),
        ("is not a regular file", "a FIFO"),
        ("is a symbolic link", "a link to /dev/zero"),
    ];
    for (reason, plant) in attempts {
        let _ = fs::remove_file(&project_file);
        let planted = match plant {
            "a link out" => std::os::unix::fs::symlink(&secret, &project_file),
            "a FIFO" => rustix::fs::mkfifoat(
                rustix::fs::CWD,
                &project_file,
                rustix::fs::Mode::from_bits_truncate(0o600),
            )
            .map_err(std::io::Error::from),
            _ => std::os::unix::fs::symlink("/dev/zero", &project_file),
        };
        planted.unwrap_or_else(|err| panic!("{plant}: {err}"));
        let err = fixture
            .load(&[], &FlagOverrides::default())
            .err()
            .unwrap_or_else(|| panic!("a planted .ybs.json ({plant}) was loaded"));
        assert!(
            err.starts_with(&format!(
                "cannot read config file {}",
                project_file.display()
            )) && err.contains(reason),
            "{err}"
        );
    }
    assert_eq!(
        fs::read_to_string(&secret).unwrap_or_default(),
        r#"{"llm": {"model": "planted"}}"#
    );
}

#[test]
fn the_settings_of_built_in_tools_are_those_of_the_registrys_tools() {
    // `tools.builtin` names each built-in tool once; the registry is where tools are: a
    // tool added to one and not the other fails here.
    // `web_search` is the provider's hosted search, switched on in the request; ybs runs none.
    let configured: Vec<String> = (Config::default().tools.builtin.by_name().into_keys())
        .filter(|name| name != "web_search")
        .collect();
    let mut registered = ybs_tools::ToolRegistry::new().builtin_names();
    registered.sort();
    assert_eq!(configured, registered);
}
