//! The editor's files: when the client offers `fs/read_text_file` and `fs/write_text_file`,
//! ybs's file tools read the text the editor holds (its unsaved changes are what the user
//! sees) and write through the editor, so the change lands in the open buffer. The tools
//! resolve and check every path against the sandbox before the editor is asked
//! ([`ybs_tools::editor`]); a client that offers neither leaves the tools on the disk.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    FileSystemCapabilities, ReadTextFileRequest, SessionId, WriteTextFileRequest,
};
use ybs_tools::{Editor, EditorFiles};

/// The client as the editor of one session.
struct ClientFiles {
    connection: ConnectionTo<Client>,
    session: SessionId,
    reads: bool,
    writes: bool,
    /// Where failures to read are logged (the tool then reads the disk).
    log: Mutex<Box<dyn Write + Send>>,
}

/// The editor for `session` when the client offers at least one of the two requests.
pub fn editor(
    connection: ConnectionTo<Client>,
    session: SessionId,
    offered: &FileSystemCapabilities,
    log: Box<dyn Write + Send>,
) -> Editor {
    if !offered.read_text_file && !offered.write_text_file {
        return Editor::default();
    }
    Editor::new(Arc::new(ClientFiles {
        connection,
        session,
        reads: offered.read_text_file,
        writes: offered.write_text_file,
        log: Mutex::new(log),
    }))
}

impl EditorFiles for ClientFiles {
    fn read(&self, path: &Path) -> Option<String> {
        if !self.reads {
            return None;
        }
        let request = ReadTextFileRequest::new(self.session.clone(), path);
        let response =
            futures::executor::block_on(self.connection.send_request(request).block_task());
        match response {
            Ok(response) => Some(response.content),
            Err(error) => {
                let mut log = (self.log.lock()).unwrap_or_else(std::sync::PoisonError::into_inner);
                let _ = writeln!(
                    log,
                    "ybs acp: the editor could not read {} ({error}); reading the disk",
                    path.display()
                );
                None
            }
        }
    }

    fn writes(&self) -> bool {
        self.writes
    }

    fn write(&self, path: &Path, text: &str) -> Result<(), String> {
        let request = WriteTextFileRequest::new(self.session.clone(), path, text);
        futures::executor::block_on(self.connection.send_request(request).block_task())
            .map(|_| ())
            .map_err(|error| error.to_string())
    }
}
