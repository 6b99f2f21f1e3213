//! CSV as RFC 4180 writes it, for the files people bring (labels files) and the ones Kiln writes
//! and reads back (a run's tables, whose class names may hold commas and quotes).

/// Parses CSV as RFC 4180 writes it (quoted cells with `""` for a quote, commas and line breaks
/// inside quotes, CRLF or LF), leniently as Python's reader is (a stray quote inside an unquoted
/// cell is kept). Blank lines are passed over. Each record comes with the line it starts on; an
/// error is the line of a quoted cell that is never closed.
pub fn records(text: &str, delimiter: char) -> Result<Vec<(usize, Vec<String>)>, usize> {
    let mut records = Vec::new();
    let mut cells: Vec<String> = Vec::new();
    let mut cell = String::new();
    let (mut line, mut record_line, mut quoted_since) = (1usize, 1usize, None::<usize>);
    let mut chars = text.chars().peekable();
    let mut cell_started = false;
    while let Some(c) = chars.next() {
        if quoted_since.is_some() {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                '"' => quoted_since = None,
                '\n' => {
                    line += 1;
                    cell.push('\n');
                }
                _ => cell.push(c),
            }
            continue;
        }
        match c {
            '"' if !cell_started => {
                quoted_since = Some(line);
                cell_started = true;
            }
            c if c == delimiter => {
                cells.push(std::mem::take(&mut cell));
                cell_started = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                cells.push(std::mem::take(&mut cell));
                if !(cells.len() == 1 && cells[0].trim().is_empty()) {
                    records.push((record_line, std::mem::take(&mut cells)));
                }
                cells.clear();
                cell_started = false;
                line += 1;
                record_line = line;
            }
            _ => {
                cell.push(c);
                cell_started = true;
            }
        }
    }
    if let Some(opened) = quoted_since {
        return Err(opened);
    }
    cells.push(cell);
    if !(cells.len() == 1 && cells[0].trim().is_empty()) {
        records.push((record_line, cells));
    }
    Ok(records)
}

/// The cells of one CSV line (a header, say), or `None` when a quote in it is not closed.
pub fn line_cells(line: &str) -> Option<Vec<String>> {
    let mut records = records(line, ',').ok()?;
    Some(if records.is_empty() {
        Vec::new()
    } else {
        records.swap_remove(0).1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_rfc_4180_quoting_and_line_ends() {
        let parsed = records("a,\"b,\"\"c\"\"\r\nd\"\r\n\r\ne,f", ',').unwrap();
        assert_eq!(
            parsed,
            [
                (1, vec!["a".to_string(), "b,\"c\"\r\nd".to_string()]),
                (4, vec!["e".to_string(), "f".to_string()]),
            ]
        );
        assert_eq!(records("a,\"b\nc", ','), Err(1));
        assert_eq!(
            line_cells("true \\ predicted,\"tabby, orange\",\"say \"\"hi\"\"\",🐈"),
            Some(vec![
                "true \\ predicted".to_string(),
                "tabby, orange".into(),
                "say \"hi\"".into(),
                "🐈".into()
            ])
        );
    }
}
