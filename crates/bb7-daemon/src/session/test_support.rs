//! Set-up shared by the unit tests of several modules.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::session::Session;
use crate::store::global::Home;
use crate::wire::requests::{Request, fields};

/// A session initialized on `dir/project`, with its home in `dir/home`.
pub(crate) fn initialized_session(dir: &Path) -> Session {
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let mut session = Session::new(Home::new(dir.join("home"), None));
    let root = project.display().to_string();
    session
        .dispatch(Request::Bb7Init(fields::Bb7Init {
            project_root: root.clone(),
        }))
        .unwrap();
    session
        .dispatch(Request::Init(fields::Init { project_root: root }))
        .unwrap();
    session
}
