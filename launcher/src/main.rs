//! `kilnw`: the program the Windows Start menu opens. It starts the `kiln` beside it with no
//! console window and shows a dialog if `kiln` fails before its window appears.
//!
//! `kiln` itself stays a console program, so `kiln train` in a terminal prints there and holds
//! the prompt until it ends. A GUI-subsystem `kiln` would instead hand the prompt back at once
//! and print over it; Python's `pythonw` and Blender's launcher split the two the same way.
//! Elsewhere `kilnw` simply becomes `kiln` (exec), which is what the tests exercise.

#![cfg_attr(windows, windows_subsystem = "windows")]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let kiln = match std::env::current_exe() {
        Ok(me) => sibling_kiln(&me),
        Err(e) => return fail(&format!("Kiln could not find where it is installed ({e}).")),
    };
    if !kiln.is_file() {
        return fail(&format!(
            "Kiln is not installed completely: {} is missing. Reinstall Kiln.",
            kiln.display()
        ));
    }
    launch(&kiln, &args)
}

/// The `kiln` program in the launcher's own folder.
fn sibling_kiln(launcher: &Path) -> PathBuf {
    let name = if cfg!(windows) { "kiln.exe" } else { "kiln" };
    launcher.with_file_name(name)
}

/// Replaces this process with `kiln`, so signals and the exit status are its own.
#[cfg(unix)]
fn launch(kiln: &Path, args: &[OsString]) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(kiln).args(args).exec();
    fail(&format!(
        "Kiln could not start {}: {error}.",
        kiln.display()
    ))
}

/// Starts `kiln` without a console window and waits, to report a failure it printed.
#[cfg(windows)]
fn launch(kiln: &Path, args: &[OsString]) -> ExitCode {
    use std::os::windows::process::CommandExt;
    use std::process::{Command, Stdio};
    use windows_sys::Win32::System::Threading::CREATE_NO_WINDOW;

    let child = Command::new(kiln)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .creation_flags(CREATE_NO_WINDOW)
        .spawn();
    let output = match child.and_then(|child| child.wait_with_output()) {
        Ok(output) => output,
        Err(e) => return fail(&format!("Kiln could not start {}: {e}.", kiln.display())),
    };
    if output.status.success() {
        return ExitCode::SUCCESS;
    }
    let printed = String::from_utf8_lossy(&output.stderr);
    let last_words = printed.trim().lines().last().unwrap_or("");
    let reason = last_words.strip_prefix("error: ").unwrap_or(last_words);
    fail(&if reason.is_empty() {
        format!("Kiln stopped unexpectedly ({}).", output.status)
    } else {
        format!("Kiln stopped: {reason}")
    })
}

/// Other systems have no window for Kiln to open.
#[cfg(not(any(unix, windows)))]
fn launch(_kiln: &Path, _args: &[OsString]) -> ExitCode {
    fail("kilnw opens Kiln's window on Windows, macOS and Linux only.")
}

/// Tells the person what went wrong where they will see it, and fails.
fn fail(sentence: &str) -> ExitCode {
    show(sentence);
    ExitCode::FAILURE
}

/// A GUI-subsystem program has no console to print to: the sentence goes in a dialog.
#[cfg(windows)]
fn show(sentence: &str) {
    use windows_sys::Win32::UI::WindowsAndMessaging::{MB_ICONERROR, MB_OK, MessageBoxW};
    let wide = |text: &str| text.encode_utf16().chain([0]).collect::<Vec<u16>>();
    let (text, title) = (wide(sentence), wide("Kiln"));
    // SAFETY: both strings are NUL-terminated UTF-16 that outlive the call; no owner window.
    unsafe {
        MessageBoxW(
            std::ptr::null_mut(),
            text.as_ptr(),
            title.as_ptr(),
            MB_OK | MB_ICONERROR,
        )
    };
}

/// Where `kilnw` is started from a terminal, the terminal shows the sentence.
#[cfg(not(windows))]
fn show(sentence: &str) {
    eprintln!("error: {sentence}");
}
