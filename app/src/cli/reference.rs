//! The command-line reference, `docs/cli-reference.md`, generated from the declarations that
//! build the flags: clap's commands, and the settings table for each setting's default and the
//! values it accepts. A test keeps the checked-in page equal to what this writes.

use std::fmt::Write;

use clap::{Arg, ArgAction, Command, CommandFactory};
use kiln_core::config::ExperimentDraft;
use kiln_core::settings::rows;

/// The page, in Markdown.
pub fn reference_markdown() -> String {
    let mut kiln = super::Cli::command();
    kiln.build();
    let mut page = String::from(
        "# Command-line reference\n\n\
         Every command and flag of `kiln`, generated from the declarations that build them (clap's \
         and the settings table's), so it cannot drift from `kiln --help`. Do not edit it by hand: \
         `UPDATE_DOCS=1 cargo test --workspace cli_reference` rewrites it, and `cargo test` fails while \
         it differs. [The command line](command-line.md) explains the commands with examples.\n\n\
         A setting's flag sets the key of the same name in a config file (`--batch-size` sets \
         `batch_size`); every flag overrides the preset or config file a run starts from.\n",
    );
    command_section(&mut page, &kiln, "kiln");
    page
}

/// One command's section, then each of its subcommands'.
fn command_section(page: &mut String, command: &Command, path: &str) {
    let _ = writeln!(page, "\n## `{path}`\n");
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        let _ = writeln!(page, "{about}\n");
    }
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage: ");
    let _ = writeln!(page, "```text\n{usage}\n```");
    let args: Vec<&Arg> = command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set() && !matches!(arg.get_id().as_str(), "help" | "version"))
        .collect();
    if !args.is_empty() {
        page.push_str("\n| flag | accepts | default | what it does |\n| --- | --- | --- | --- |\n");
        for arg in args {
            let _ = writeln!(
                page,
                "| {} | {} | {} | {} |",
                cell(&flag_text(arg)),
                cell(&accepts(arg)),
                cell(&default_of(arg, path)),
                cell(
                    &arg.get_long_help()
                        .or(arg.get_help())
                        .map(|h| h.to_string())
                        .unwrap_or_default()
                ),
            );
        }
    }
    for sub in command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
    {
        command_section(page, sub, &format!("{path} {}", sub.get_name()));
    }
}

/// How the flag is written: `--lr <RATE>`, `--flip`, or a positional `<RUN>`.
fn flag_text(arg: &Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|name| format!("<{name}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = !matches!(
        arg.get_action(),
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
    );
    let many = matches!(arg.get_action(), ArgAction::Append)
        || arg.get_num_args().is_some_and(|n| n.max_values() > 1);
    let value = if many { format!("{value}…") } else { value };
    match (arg.get_long(), takes_value) {
        (Some(long), true) => {
            let aliases = arg
                .get_visible_aliases()
                .into_iter()
                .flatten()
                .map(|alias| format!(", `--{alias}`"))
                .collect::<String>();
            format!("`--{long} {value}`{aliases}")
        }
        (Some(long), false) => format!("`--{long}`"),
        (None, _) => format!("`{value}`"),
    }
}

/// What the flag accepts: a setting's range or words from its row, else clap's possible values.
fn accepts(arg: &Arg) -> String {
    if let Some(row) = setting_row(arg) {
        return row.accepts();
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    values.join(", ")
}

/// The flag's default: a setting's value in a new draft (what a run without the flag, preset or
/// config gets), else clap's default.
fn default_of(arg: &Arg, command: &str) -> String {
    let draft = ExperimentDraft::default();
    if let Some(row) = setting_row(arg) {
        return format!("`{}`", row.show(&draft));
    }
    // The specs' flags of the commands that build a run's draft, by the key they set.
    let builds_a_draft = matches!(command, "kiln train" | "kiln bench");
    let spec = match arg.get_id().as_str() {
        _ if !builds_a_draft => None,
        "dataset" => Some(draft.dataset.to_string()),
        "model" => Some(draft.model.to_string()),
        "optimizer" => Some(draft.optimizer.name().to_owned()),
        "schedule" => Some(draft.schedule.to_string()),
        "device" => Some(draft.device.to_string()),
        "name" => Some(draft.name.clone()),
        _ => None,
    };
    if let Some(value) = spec {
        return format!("`{value}`");
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| format!("`{}`", v.to_string_lossy()))
        .collect();
    defaults.join(", ")
}

/// The settings table's row behind a flag, when the flag is a row's (its id is the key).
fn setting_row(arg: &Arg) -> Option<&'static kiln_core::settings::Row> {
    rows()
        .iter()
        .find(|row| row.setting().key() == arg.get_id().as_str())
}

/// Text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page in docs/ is what the flags generate; `UPDATE_DOCS=1` rewrites it after an
    /// intended change (the generated page's own header says so).
    #[test]
    fn cli_reference_in_docs_is_what_the_flags_generate() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli-reference.md");
        let generated = reference_markdown();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &generated).unwrap();
            return;
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        if checked_in != generated {
            let first = checked_in
                .lines()
                .zip(generated.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| checked_in.lines().count().min(generated.lines().count()));
            panic!(
                "docs/cli-reference.md differs from what the flags generate, from line {}:\n  checked in: {}\n  generated:  {}\nRun `UPDATE_DOCS=1 cargo test --workspace cli_reference` and commit the page.",
                first + 1,
                checked_in.lines().nth(first).unwrap_or("(end)"),
                generated.lines().nth(first).unwrap_or("(end)"),
            );
        }
    }

    #[test]
    fn every_setting_row_is_in_the_reference_with_its_default_and_range() {
        let page = reference_markdown();
        for row in rows() {
            let flag = format!("`--{}", row.setting().flag());
            let line = page
                .lines()
                .find(|line| line.starts_with(&format!("| {flag}")))
                .unwrap_or_else(|| panic!("no row for {flag}"));
            assert!(line.contains(&cell(&row.accepts())), "{line}");
        }
        assert!(
            page.contains("| `--lr <RATE>` | above 0 and at most 10 | `0.001` |"),
            "{page}"
        );
        assert!(page.contains("## `kiln train`") && page.contains("## `kiln data inspect`"));
    }
}
