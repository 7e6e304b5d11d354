//! The preprocessed translation unit and the way back from its bytes to the
//! user's file, line and column.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::ScopError;

/// A C file after the preprocessor, with a line map back to the original.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file the user named.
    pub path: PathBuf,
    /// Full preprocessor output, line markers included (this is what code
    /// generation splices into).
    pub text: String,
    /// The same bytes with line markers and every line that does not come
    /// from `path` blanked out: what the C parser sees.
    pub parse_text: String,
    /// For each line of `text`: the original line number if the line comes from
    /// the user's file.
    line_origin: Vec<Option<u32>>,
    line_starts: Vec<usize>,
}

/// A position in the user's file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Location {
    pub line: u32,
    pub column: u32,
}

impl Source {
    /// Runs `cc -E` on `path` with the extra arguments (`-I`, `-D`, ...).
    pub fn preprocess(path: &Path, cc: &str, cc_args: &[String]) -> Result<Source, ScopError> {
        let whole = |reason: String| ScopError::new(path, None, reason);
        if !path.is_file() {
            return Err(whole("no such file".into()));
        }
        let out = Command::new(cc)
            .arg("-E")
            .args(cc_args)
            .arg(path)
            .output()
            .map_err(|e| whole(format!("cannot run the C preprocessor `{cc}`: {e}")))?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr);
            return Err(whole(format!("the C preprocessor failed:\n{}", msg.trim_end())));
        }
        let text =
            String::from_utf8(out.stdout).map_err(|_| whole("the preprocessed file is not UTF-8".into()))?;
        Ok(Source::from_preprocessed(path, text))
    }

    /// Builds the line map of already preprocessed text (`# N "file"` markers).
    pub fn from_preprocessed(path: &Path, text: String) -> Source {
        let mut line_origin = Vec::new();
        let mut line_starts = Vec::new();
        let mut parse_text = String::with_capacity(text.len());
        let mut main_file: Option<String> = None;
        let mut in_main = main_file.is_none();
        let mut next_line: u32 = 1;
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            line_starts.push(offset);
            offset += line.len();
            if let Some((num, file)) = parse_line_marker(line) {
                if main_file.is_none() {
                    main_file = Some(file.clone());
                }
                in_main = main_file.as_deref() == Some(file.as_str());
                next_line = num;
                line_origin.push(None);
                blank(&mut parse_text, line);
                continue;
            }
            if in_main {
                line_origin.push(Some(next_line));
                parse_text.push_str(line);
            } else {
                line_origin.push(None);
                blank(&mut parse_text, line);
            }
            next_line += 1;
        }
        Source { path: path.to_path_buf(), text, parse_text, line_origin, line_starts }
    }

    /// The user-file location of a byte of the preprocessed text. Columns are
    /// those of the preprocessed line (equal to the original unless a macro
    /// expanded earlier on the same line).
    pub fn location(&self, byte: usize) -> Option<Location> {
        let idx = match self.line_starts.binary_search(&byte) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let line = self.line_origin.get(idx).copied().flatten()?;
        let column = (byte - self.line_starts[idx]) as u32 + 1;
        Some(Location { line, column })
    }

    /// The same source with another parser view of the same length (the
    /// line map stays valid).
    pub(super) fn with_parse_text(&self, parse_text: String) -> Source {
        assert_eq!(parse_text.len(), self.parse_text.len(), "the parser view keeps every byte offset");
        Source { parse_text, ..self.clone() }
    }

    /// The byte offset where the line holding `byte` starts.
    pub fn line_start(&self, byte: usize) -> usize {
        match self.line_starts.binary_search(&byte) {
            Ok(i) => self.line_starts[i],
            Err(i) => self.line_starts[i.saturating_sub(1)],
        }
    }
}

/// `# 12 "file.c" 2` → (12, "file.c").
fn parse_line_marker(line: &str) -> Option<(u32, String)> {
    let rest = line.strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("line").unwrap_or(rest).trim_start();
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        return None;
    }
    let num = digits.parse().ok()?;
    let rest = rest[digits.len()..].trim_start();
    let name = rest.strip_prefix('"')?;
    let end = name.find('"')?;
    Some((num, name[..end].to_string()))
}

/// Keeps byte offsets identical: every character but newlines becomes spaces.
fn blank(out: &mut String, line: &str) {
    for b in line.bytes() {
        out.push(if b == b'\n' { '\n' } else { ' ' });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_back_to_the_user_file() {
        let text = "# 1 \"k.c\"\n# 1 \"h.h\" 1\nint h;\n# 3 \"k.c\" 2\nint a;\n  int b;\n";
        let src = Source::from_preprocessed(Path::new("k.c"), text.to_string());
        let a = text.find("int a").unwrap();
        let b = text.find("int b").unwrap();
        assert_eq!(src.location(a), Some(Location { line: 3, column: 1 }));
        assert_eq!(src.location(b), Some(Location { line: 4, column: 3 }));
        assert_eq!(src.location(text.find("int h").unwrap()), None);
        assert_eq!(src.parse_text.len(), text.len());
        assert!(!src.parse_text.contains("int h"));
        assert!(src.parse_text.contains("int a"));
    }
}
