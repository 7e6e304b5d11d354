//! The preprocessed translation unit and the way back from its bytes to the
//! user's file, line and column.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::ScopError;

/// A C file after the preprocessor, with a line map back to the original.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
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
        if path.is_dir() {
            return Err(whole("is a directory; name a C file".into()));
        }
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

    /// Builds the line map of already preprocessed text (`# N "file"`
    /// markers). A function of the user's file defined with an implicit
    /// `int` (gnu89's `main() { ... }`) gets its `int` written out, here
    /// and so in every program built from this text.
    pub fn from_preprocessed(path: &Path, text: String) -> Source {
        let source = Source::mapped(path, text);
        let at = implicit_int(&source.parse_text);
        if at.is_empty() {
            return source;
        }
        let mut text = source.text;
        for &p in at.iter().rev() {
            text.insert_str(p, "int ");
        }
        Source::mapped(path, text)
    }

    fn mapped(path: &Path, text: String) -> Source {
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

    /// The same source with a `#pragma scop` line before each span and a
    /// `#pragma endscop` line after it (spans of whole lines, in order,
    /// disjoint), each pragma followed by a line marker, so that every line
    /// keeps its place in the user's file: regions found without pragmas
    /// ([`super::ExtractOptions::autodetect`]) are then read as if the user
    /// had marked them.
    pub(super) fn with_regions_marked(&self, spans: &[(usize, usize)]) -> Source {
        let file = self
            .text
            .split_inclusive('\n')
            .find_map(parse_line_marker)
            .map_or_else(|| self.path.display().to_string(), |(_, f)| f);
        let line_of = |byte: usize| self.location(byte).map(|l| l.line);
        let mut text = String::with_capacity(self.text.len() + 64 * spans.len());
        let mut at = 0;
        for &(start, end) in spans {
            let first = line_of(start).unwrap_or(1);
            let next =
                line_of(end).unwrap_or_else(|| line_of(end.saturating_sub(1)).map_or(first, |l| l + 1));
            text.push_str(&self.text[at..start]);
            text.push_str(&format!("#pragma scop\n# {first} \"{file}\"\n"));
            text.push_str(&self.text[start..end]);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("#pragma endscop\n# {next} \"{file}\"\n"));
            at = end;
        }
        text.push_str(&self.text[at..]);
        Source::mapped(&self.path, text)
    }

    /// The byte offset where the line holding `byte` starts.
    pub fn line_start(&self, byte: usize) -> usize {
        match self.line_starts.binary_search(&byte) {
            Ok(i) => self.line_starts[i],
            Err(i) => self.line_starts[i.saturating_sub(1)],
        }
    }
}

/// Where, at file scope, a function definition has no type (`main() {`,
/// K&R `f(a) int a; {`): the byte offsets of their names. C89 took the type
/// to be `int`; C99 has no implicit `int`, nor has tree-sitter's grammar.
/// An item starts at the beginning of the text, after a `;`, or after the
/// `}` of a function body; string and character literals and directive
/// lines are skipped.
fn implicit_int(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let (mut depth, mut parens, mut i, mut item_start) = (0usize, 0usize, 0usize, true);
    // For each open brace: whether it opens a function body (follows `)`,
    // or the `;` of K&R parameter declarations).
    let mut bodies: Vec<bool> = Vec::new();
    let (mut last, mut fresh_line) = (b';', true);
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            fresh_line |= c == b'\n';
            i += 1;
            continue;
        }
        if c == b'#' && fresh_line {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            continue;
        }
        fresh_line = false;
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c && b[i] != b'\n' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            (i, last, item_start) = (i + 1, c, false);
            continue;
        }
        if ident(c) {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            if depth == 0
                && parens == 0
                && item_start
                && !c.is_ascii_digit()
                && !KEYWORDS.contains(&&text[start..i])
                && defines_a_function(&text[i..])
            {
                out.push(start);
            }
            (last, item_start) = (b'a', false);
            continue;
        }
        match c {
            b'(' => parens += 1,
            b')' => parens = parens.saturating_sub(1),
            b'{' => {
                bodies.push(last == b')' || last == b';');
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                let body = bodies.pop().unwrap_or(false);
                (i, last, item_start) = (i + 1, c, depth == 0 && body);
                continue;
            }
            b';' if depth == 0 && parens == 0 => {
                (i, last, item_start) = (i + 1, c, true);
                continue;
            }
            _ => {}
        }
        (i, last, item_start) = (i + 1, c, false);
    }
    out
}

/// Whether `rest`, what follows a name at file scope, is a parameter list
/// and then a body: `(...) {`, or `(...)` K&R declarations ending in `;`
/// and `{`.
fn defines_a_function(rest: &str) -> bool {
    let rest = rest.trim_start();
    if !rest.starts_with('(') {
        return false;
    }
    let mut level = 0;
    let mut close = None;
    for (k, c) in rest.char_indices() {
        match c {
            '(' => level += 1,
            ')' => {
                level -= 1;
                if level == 0 {
                    close = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else { return false };
    let after = &rest[close + 1..];
    let Some(brace) = after.find('{') else { return false };
    let between = after[..brace].trim();
    !between.contains(['(', ')', '=', '}', '{']) && (between.is_empty() || between.ends_with(';'))
}

/// Words that begin a declaration or statement, never a function's name.
const KEYWORDS: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "_Bool",
    "_Complex",
    "_Static_assert",
    "_Noreturn",
    "_Alignas",
    "_Thread_local",
    "__extension__",
    "__attribute__",
    "__asm__",
    "asm",
    "__inline",
    "__inline__",
    "__restrict",
    "__thread",
    "__typeof__",
    "typeof",
];

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

    #[test]
    fn an_implicit_int_function_gets_its_int() {
        let text = "# 1 \"k.c\"\nstruct s { int a; } g;\nmain()\n{\n  return 0;\n}\nf(a, b) int a; char b;\n{ return a; }\nint h(void) { return 1; }\nstruct s k(void) { struct s x = { 1 }; return x; }\nstatic t(void);\n";
        let src = Source::from_preprocessed(Path::new("k.c"), text.to_string());
        assert!(src.text.contains("\nint main()\n"), "{}", src.text);
        assert!(src.text.contains("\nint f(a, b) int a;"), "{}", src.text);
        assert!(
            src.text.contains("\nint h(void)") && src.text.contains("\nstruct s k(void)"),
            "{}",
            src.text
        );
        assert!(src.text.contains("\nstatic t(void);"), "{}", src.text);
        assert_eq!(src.location(src.text.find("return 0").unwrap()), Some(Location { line: 4, column: 3 }));
    }
}
