//! Ctrl-V and `/paste`: an image on the clipboard attached to the next message, as `/image`
//! attaches a file. The clipboard is read through the platform's program (`wl-paste` under
//! Wayland, `xclip` under X11, `pngpaste` or `osascript` on macOS), taken only from an
//! absolute `PATH` entry outside the project, run with a timeout and its output capped. The
//! image is kept under ybs's data directory, so a resumed session can send it again. With
//! text on the clipboard instead, Ctrl-V pastes the text (made inert) into the line.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use ybs_core::Part;

use crate::startup::images;

/// The largest image taken from the clipboard; the providers refuse larger ones anyway.
const MAX_IMAGE_BYTES: usize = 20 * 1024 * 1024;

/// The most text Ctrl-V puts into the line.
const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// How long the clipboard program may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// What the clipboard gave.
#[derive(Debug)]
pub enum Pasted {
    /// An image, attached to the next message; the words to show.
    Image(Box<Part>, String),
    /// Text for the line (inert).
    Text(String),
}

/// A program that reads the clipboard, with its arguments for an image and for text.
struct Reader {
    name: &'static str,
    image: &'static [&'static str],
    /// `None`: it cannot give text.
    text: Option<&'static [&'static str]>,
}

/// The programs that can read the clipboard here, in the order they are tried.
fn readers() -> Vec<Reader> {
    if cfg!(target_os = "macos") {
        return vec![
            Reader {
                name: "pngpaste",
                image: &["-"],
                text: None,
            },
            Reader {
                name: "osascript",
                image: &["-e", "the clipboard as «class PNGf»"],
                text: Some(&["-e", "the clipboard as text"]),
            },
        ];
    }
    let wayland = Reader {
        name: "wl-paste",
        image: &["--no-newline", "--type", "image/png"],
        text: Some(&["--no-newline", "--type", "text/plain"]),
    };
    let x11 = Reader {
        name: "xclip",
        image: &["-selection", "clipboard", "-t", "image/png", "-o"],
        text: Some(&["-selection", "clipboard", "-o"]),
    };
    if std::env::var_os("WAYLAND_DISPLAY").is_some_and(|display| !display.is_empty()) {
        vec![wayland, x11]
    } else {
        vec![x11, wayland]
    }
}

/// Reads the clipboard: an image when it holds one (saved under `data_home` and attached),
/// else, with `text_too`, its text. `Err` says why nothing was pasted.
pub fn paste(cwd: &Path, data_home: Option<&Path>, text_too: bool) -> Result<Pasted, String> {
    let found = (readers().into_iter()).find_map(|reader| {
        let program = ybs_agent::project::safe_git::program_outside_project(reader.name, cwd)?;
        Some((reader, program))
    });
    let Some((reader, program)) = found else {
        let wanted = readers()
            .iter()
            .map(|reader| reader.name)
            .collect::<Vec<_>>();
        return Err(format!(
            "cannot paste: no clipboard program found (install {})",
            wanted.join(" or ")
        ));
    };
    let name = reader.name;
    let (bytes, said) = run(&program, reader.image, MAX_IMAGE_BYTES)
        .map_err(|error| format!("cannot paste: {name}: {error}"))?;
    let bytes = if name == "osascript" {
        from_hex_data(&bytes)
    } else {
        bytes
    };
    if images::media_type(&bytes).is_some() {
        let dir = data_home.ok_or(
            "cannot paste an image: ybs has no data directory to keep it in (set HOME or \
             XDG_DATA_HOME)",
        )?;
        let path = save(&bytes, &dir.join("ybs").join("pasted"))?;
        let part = images::image_part(&path, cwd)?;
        let shown = crate::render::inert(&path.display().to_string()).into_owned();
        let kib = bytes.len().div_ceil(1024);
        return Ok(Pasted::Image(
            Box::new(part),
            format!(
                "image from the clipboard ({kib} KiB, kept as {shown}) attached to the next message"
            ),
        ));
    }
    if text_too && let Some(args) = reader.text {
        let (text, _) = run(&program, args, MAX_TEXT_BYTES)
            .map_err(|error| format!("cannot paste: {name}: {error}"))?;
        let text = String::from_utf8_lossy(&text);
        if !text.is_empty() {
            return Ok(Pasted::Text(crate::render::inert_lines(&text).into_owned()));
        }
    }
    let said = crate::render::inert(said.lines().next().unwrap_or("").trim()).into_owned();
    let said = if said.is_empty() {
        String::new()
    } else {
        format!(" ({name}: {said})")
    };
    Err(format!(
        "the clipboard holds no image{said}; copy one, or attach a file with /image PATH"
    ))
}

/// Runs the clipboard program: its output, and the first words of its errors. Output over
/// `cap` is refused whole rather than cut (a cut image is no image).
fn run(program: &Path, args: &[&str], cap: usize) -> Result<(Vec<u8>, String), String> {
    let mut command = Command::new(program);
    command.args(args);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let output = ybs_tools::process::run_binary(command, TIMEOUT, cap + 1)
        .map_err(|error| error.to_string())?;
    if output.timed_out {
        return Err(format!("no answer within {} seconds", TIMEOUT.as_secs()));
    }
    if output.stdout_capped || output.stdout.len() > cap {
        return Err(format!(
            "the clipboard holds more than {} MiB",
            cap / (1024 * 1024)
        ));
    }
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Ok((Vec::new(), said));
    }
    Ok((output.stdout, said))
}

/// `osascript` prints data as `«data PNGf89504E47…»`: the bytes of its hex digits.
fn from_hex_data(printed: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(printed);
    let Some(hex) = text
        .trim()
        .strip_prefix("«data PNGf")
        .and_then(|t| t.strip_suffix('»'))
    else {
        return Vec::new();
    };
    (0..hex.len() / 2)
        .filter_map(|at| u8::from_str_radix(hex.get(at * 2..at * 2 + 2)?, 16).ok())
        .collect()
}

/// Keeps the image in `dir` under a new name; only its user may read it.
fn save(bytes: &[u8], dir: &Path) -> Result<PathBuf, String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    let path = dir.join(format!("clipboard-{stamp}.png"));
    ybs_fsguard::write_atomic(&path, bytes, ybs_fsguard::Permissions::Exact(0o600))
        .map_err(|error| format!("cannot keep the pasted image in {}: {error}", dir.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn osascript_data_is_read_from_its_hex() {
        assert_eq!(
            from_hex_data("«data PNGf89504E47»\n".as_bytes()),
            b"\x89PNG"
        );
        assert!(from_hex_data(b"some text").is_empty());
    }
}
