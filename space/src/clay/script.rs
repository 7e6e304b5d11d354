//! The text of a sequence of transformations: one step per line as `Step`'s `Display`
//! writes it (`fuse (0)`, `skew (1,0) 1 -1`, `shift (0,0) [1 0] -1`), `#` starting a
//! comment. `explain` prints the statements each step acts on as a comment; `apply` reads
//! the text back.

use super::form::ClayForm;
use super::transform::Step;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ScriptError {
    pub line: usize,
    pub reason: String,
}

/// The steps, one per line, each with the statements inside the node it names (read on
/// `from` replayed up to that step).
pub fn print(from: &ClayForm, steps: &[Step]) -> String {
    let mut form = from.clone();
    let mut out = String::new();
    for step in steps {
        let inside: Vec<&str> =
            form.inside(step.prefix()).iter().map(|&r| form.relations[r].statement.as_str()).collect();
        out.push_str(&format!("{:<32} # {}\n", step.to_string(), inside.join(" ")));
        // A step that does not apply is printed all the same; `apply` names it.
        let _ = form.apply(step);
    }
    out
}

/// The steps of `text`.
pub fn parse(text: &str) -> Result<Vec<Step>, ScriptError> {
    let mut steps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        steps.push(parse_step(line).map_err(|reason| ScriptError { line: n + 1, reason })?);
    }
    Ok(steps)
}

fn parse_step(line: &str) -> Result<Step, String> {
    let (op, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    let Some(rest) = rest.strip_prefix('(') else {
        return Err(format!("`{op}` needs a β-prefix such as (0,1) next"));
    };
    let (prefix, args) = rest.split_once(')').ok_or("the β-prefix is not closed with `)`")?;
    let prefix = numbers(prefix, ',')?;
    let args = args.trim();
    // A bracketed list, if any, then plain numbers.
    let (list, plain) = match args.strip_prefix('[') {
        Some(a) => {
            let (l, p) = a.split_once(']').ok_or("a list is not closed with `]`")?;
            (Some(numbers(l, ' ')?), p.trim())
        }
        None => (None, args),
    };
    let plain = numbers(plain, ' ')?;
    let need = |n: usize, list_too: bool| -> Result<(), String> {
        if plain.len() != n || list.is_some() != list_too {
            let shape = match (op, list_too) {
                ("reorder", _) => "reorder (PREFIX) [NEW POSITION OF EACH CHILD...]",
                ("shift", _) => "shift (PREFIX) [PARAMETER COEFFICIENTS...] CONSTANT",
                ("distribute", _) => "distribute (PREFIX) FIRST-CHILD-OF-THE-NEW-LOOP",
                ("interchange", _) => "interchange (PREFIX) DEPTH",
                ("skew", _) => "skew (PREFIX) DEPTH FACTOR",
                ("reshape", _) => "reshape (PREFIX) ITERATOR FACTOR",
                _ => "OP (PREFIX)",
            };
            return Err(format!("`{op}` is written `{shape}`"));
        }
        Ok(())
    };
    let depth = |x: i64| usize::try_from(x).map_err(|_| format!("a depth or iterator is not negative: {x}"));
    let step = match op {
        "reorder" => {
            need(0, true)?;
            Step::Reorder { prefix, order: list.unwrap_or_default() }
        }
        "fuse" => {
            need(0, false)?;
            Step::Fuse { prefix }
        }
        "distribute" => {
            need(1, false)?;
            Step::Distribute { prefix, at: plain[0] }
        }
        "insert" => {
            need(0, false)?;
            Step::Insert { prefix }
        }
        "interchange" => {
            need(1, false)?;
            Step::Interchange { prefix, depth: depth(plain[0])? }
        }
        "reverse" => {
            need(0, false)?;
            Step::Reverse { prefix }
        }
        "skew" => {
            need(2, false)?;
            Step::Skew { prefix, depth: depth(plain[0])?, factor: plain[1] }
        }
        "shift" => {
            need(1, true)?;
            Step::Shift { prefix, params: list.unwrap_or_default(), constant: plain[0] }
        }
        "reshape" => {
            need(2, false)?;
            Step::Reshape { prefix, iterator: depth(plain[0])?, factor: plain[1] }
        }
        other => {
            return Err(format!(
                "unknown transformation `{other}` (reorder, fuse, distribute, insert, interchange, reverse, skew, shift, reshape)"
            ))
        }
    };
    Ok(step)
}

fn numbers(text: &str, sep: char) -> Result<Vec<i64>, String> {
    text.split(sep)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<i64>().map_err(|_| format!("`{t}` is not an integer")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_prints_and_parses_back() {
        let steps = vec![
            Step::Reorder { prefix: vec![], order: vec![1, 0, 2] },
            Step::Fuse { prefix: vec![0] },
            Step::Distribute { prefix: vec![0, 1], at: 2 },
            Step::Insert { prefix: vec![3, 0] },
            Step::Interchange { prefix: vec![0, 0], depth: 1 },
            Step::Reverse { prefix: vec![2] },
            Step::Skew { prefix: vec![1, 0], depth: 1, factor: -1 },
            Step::Shift { prefix: vec![1, 0], params: vec![1, 0], constant: -1 },
            Step::Shift { prefix: vec![1, 0], params: vec![], constant: 3 },
            Step::Reshape { prefix: vec![0, 0, 0], iterator: 2, factor: 2 },
        ];
        let text: String = steps.iter().map(|s| format!("{s}   # comment\n")).collect();
        assert_eq!(parse(&format!("# a script\n\n{text}")).unwrap(), steps);
    }

    #[test]
    fn bad_lines_name_their_line_and_shape() {
        let e = parse("fuse (0)\nskew (1,0) 1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("skew (PREFIX) DEPTH FACTOR"), "{e}");
        assert!(parse("tile (0) 32").unwrap_err().reason.contains("unknown transformation `tile`"));
        assert!(parse("fuse 0").unwrap_err().reason.contains("β-prefix"));
        assert!(parse("fuse (0,x)").unwrap_err().reason.contains("`x` is not an integer"));
    }
}
