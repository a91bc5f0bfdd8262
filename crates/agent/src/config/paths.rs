//! Where configuration files live, and `~` expansion. Everything comes from a
//! [`ConfigLocations`] value so tests can point it at a temporary directory.

use std::path::{Path, PathBuf};

use super::source::Source;

/// The places configuration is read from, resolved against a home directory,
/// `XDG_CONFIG_HOME` and a working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigLocations {
    /// The system-wide file (`/etc/ybs/config.json`).
    pub system_file: PathBuf,
    /// The user's home directory (`$HOME`), if known.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, if set.
    pub xdg_config_home: Option<PathBuf>,
    /// The working directory, where the project file `.ybs.json` is looked for.
    pub cwd: PathBuf,
}

/// The system-wide configuration file.
pub const SYSTEM_CONFIG_FILE: &str = "/etc/ybs/config.json";

/// Which of the five configuration files a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    /// `/etc/ybs/config.json`.
    System,
    /// `~/.config/ybs/config.json` (or under `$XDG_CONFIG_HOME`).
    User,
    /// `~/.ybs.json`.
    HomeShorthand,
    /// `./.ybs.json`, and the git root's `.ybs.json` when started in a subdirectory.
    Project,
    /// `--config FILE`: it must exist.
    Explicit,
}

/// One configuration file to read, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// The file.
    pub path: PathBuf,
    /// Which source it is.
    pub role: FileRole,
}

impl ConfigFile {
    /// The [`Source`] its values are recorded with.
    pub fn source(&self) -> Source {
        Source::File(self.path.clone())
    }
}

impl ConfigLocations {
    /// The locations of this process: `$HOME`, `$XDG_CONFIG_HOME`, the working directory.
    pub fn from_process() -> std::io::Result<Self> {
        Ok(ConfigLocations {
            system_file: PathBuf::from(SYSTEM_CONFIG_FILE),
            home: non_empty_env("HOME").map(PathBuf::from),
            xdg_config_home: non_empty_env("XDG_CONFIG_HOME").map(PathBuf::from),
            cwd: std::env::current_dir()?,
        })
    }

    /// The user config file: `$XDG_CONFIG_HOME/ybs/config.json` when `XDG_CONFIG_HOME` is
    /// an absolute path (the XDG spec says to ignore relative ones), else
    /// `~/.config/ybs/config.json`.
    pub fn user_file(&self) -> Option<PathBuf> {
        let base = match &self.xdg_config_home {
            Some(xdg) if xdg.is_absolute() => xdg.clone(),
            _ => self.home.as_ref()?.join(".config"),
        };
        Some(base.join("ybs").join("config.json"))
    }

    /// The files to read, in order (system, user, `~/.ybs.json`, project; later ones win),
    /// with `explicit` (`--config`) last.
    pub fn files(&self, explicit: Option<&Path>) -> Vec<ConfigFile> {
        let mut files = vec![ConfigFile {
            path: self.system_file.clone(),
            role: FileRole::System,
        }];
        if let Some(path) = self.user_file() {
            files.push(ConfigFile {
                path,
                role: FileRole::User,
            });
        }
        if let Some(home) = &self.home {
            files.push(ConfigFile {
                path: home.join(".ybs.json"),
                role: FileRole::HomeShorthand,
            });
        }
        // Started in a subdirectory: the repository's own file first, the directory's wins.
        if let Some(root) = crate::project::git_root(&self.cwd).filter(|root| *root != self.cwd) {
            files.push(ConfigFile {
                path: root.join(".ybs.json"),
                role: FileRole::Project,
            });
        }
        files.push(ConfigFile {
            path: self.cwd.join(".ybs.json"),
            role: FileRole::Project,
        });
        if let Some(path) = explicit {
            let path = PathBuf::from(expand_tilde(&path.to_string_lossy(), self.home.as_deref()));
            files.push(ConfigFile {
                path: self.cwd.join(path),
                role: FileRole::Explicit,
            });
        }
        files
    }
}

/// Replaces a leading `~` or `~/` with `home`. Other text (including `~user`) is returned
/// unchanged, as is everything when the home directory is unknown.
pub fn expand_tilde(path: &str, home: Option<&Path>) -> String {
    let Some(home) = home else {
        return path.to_owned();
    };
    if path == "~" {
        return home.to_string_lossy().into_owned();
    }
    match path.strip_prefix("~/") {
        Some(rest) => home.join(rest).to_string_lossy().into_owned(),
        None => path.to_owned(),
    }
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locations(xdg: Option<&str>) -> ConfigLocations {
        ConfigLocations {
            system_file: PathBuf::from("/etc/ybs/config.json"),
            home: Some(PathBuf::from("/home/u")),
            xdg_config_home: xdg.map(PathBuf::from),
            cwd: PathBuf::from("/work/p"),
        }
    }

    fn paths(files: &[ConfigFile]) -> Vec<String> {
        files
            .iter()
            .map(|file| file.path.display().to_string())
            .collect()
    }

    #[test]
    fn files_come_in_spec_order_with_the_explicit_one_last() {
        let files = locations(None).files(Some(Path::new("extra.json")));
        assert_eq!(
            paths(&files),
            [
                "/etc/ybs/config.json",
                "/home/u/.config/ybs/config.json",
                "/home/u/.ybs.json",
                "/work/p/.ybs.json",
                "/work/p/extra.json",
            ]
        );
        assert_eq!(files[4].role, FileRole::Explicit);
    }

    #[test]
    fn xdg_config_home_moves_the_user_file_when_absolute() {
        let files = locations(Some("/xdg")).files(None);
        assert_eq!(paths(&files)[1], "/xdg/ybs/config.json");
        let files = locations(Some("relative/xdg")).files(None);
        assert_eq!(paths(&files)[1], "/home/u/.config/ybs/config.json");
    }

    #[test]
    fn without_a_home_only_system_and_project_files_remain() {
        let mut locations = locations(None);
        locations.home = None;
        assert_eq!(
            paths(&locations.files(None)),
            ["/etc/ybs/config.json", "/work/p/.ybs.json"]
        );
    }

    #[test]
    fn the_repository_root_file_comes_before_the_working_directory_one() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().join("repo");
        let cwd = root.join("crates/x");
        std::fs::create_dir_all(&cwd).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(root.join(".git")).unwrap_or_else(|e| panic!("{e}"));
        let mut locations = locations(None);
        locations.cwd = cwd.clone();
        let files = locations.files(None);
        let project: Vec<&ConfigFile> = (files.iter())
            .filter(|file| file.role == FileRole::Project)
            .collect();
        assert_eq!(project.len(), 2);
        assert_eq!(project[0].path, root.join(".ybs.json"));
        assert_eq!(project[1].path, cwd.join(".ybs.json"));
        locations.cwd = root.clone();
        assert_eq!(
            (locations.files(None).iter())
                .filter(|file| file.role == FileRole::Project)
                .count(),
            1
        );
    }

    #[test]
    fn the_explicit_path_expands_a_tilde() {
        let files = locations(None).files(Some(Path::new("~/cfg/x.json")));
        assert_eq!(paths(&files)[4], "/home/u/cfg/x.json");
    }

    #[test]
    fn tilde_expands_only_alone_or_before_a_slash() {
        let home = Some(Path::new("/home/u"));
        assert_eq!(expand_tilde("~", home), "/home/u");
        assert_eq!(expand_tilde("~/.ssh", home), "/home/u/.ssh");
        assert_eq!(expand_tilde("~bob/x", home), "~bob/x");
        assert_eq!(expand_tilde("./a/~", home), "./a/~");
        assert_eq!(expand_tilde("~/.ssh", None), "~/.ssh");
    }
}
