//! The text of a sequence of transformations: one step per line as `Step`'s `Display`
//! writes it (`fuse (0)`, `skew (1,0) 1 -1`, `shift (0,0) [1 0] -1`), `#` starting a
//! comment. `explain` prints the statements each step acts on as a comment; `apply` reads
//! the text back.

use super::code::{parse_action, CodeStep, OPS};
use super::form::ClayForm;
use super::transform::Step;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ScriptError {
    pub line: usize,
    pub reason: String,
}

/// A whole script: the Clay steps that give the schedule, then what code generation does
/// with its loops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub steps: Vec<Step>,
    pub code: Vec<CodeStep>,
}

/// The steps, one per line, each with the statements inside the node it names (read on
/// `from` replayed up to that step), then the code steps on the final form.
pub fn print(from: &ClayForm, steps: &[Step], code: &[CodeStep]) -> String {
    let mut form = from.clone();
    let mut out = String::new();
    let mut line = |step: String, inside: Vec<usize>, form: &ClayForm| {
        let names: Vec<&str> = inside.iter().map(|&r| form.relations[r].statement.as_str()).collect();
        out.push_str(&format!("{step:<32} # {}\n", names.join(" ")));
    };
    for step in steps {
        line(step.to_string(), form.inside(step.prefix()), &form);
        // A step that does not apply is printed all the same; `apply` names it.
        let _ = form.apply(step);
    }
    for step in code {
        line(step.to_string(), form.inside(&step.prefix), &form);
    }
    out
}

/// The steps of `text`: Clay steps first, code steps after them.
pub fn parse(text: &str) -> Result<Script, ScriptError> {
    let mut script = Script::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let error = |reason: String| ScriptError { line: n + 1, reason };
        match parse_step(line).map_err(error)? {
            Line::Clay(step) if !script.code.is_empty() => {
                return Err(error(format!(
                    "`{step}` after a code-generation step: those name the loops of the final schedule, so they come last"
                )))
            }
            Line::Clay(step) => script.steps.push(step),
            Line::Code(step) => script.code.push(step),
        }
    }
    Ok(script)
}

enum Line {
    Clay(Step),
    Code(CodeStep),
}

fn parse_step(line: &str) -> Result<Line, String> {
    let (op, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    let Some(rest) = rest.strip_prefix('(') else {
        return Err(format!("`{op}` needs a β-prefix such as (0,1) next"));
    };
    let (prefix, args) = rest.split_once(')').ok_or("the β-prefix is not closed with `)`")?;
    let prefix = numbers(prefix, ',')?;
    let args = args.trim();
    if OPS.contains(&op) {
        let plain = if op == "wavefront" { Vec::new() } else { numbers(args, ' ')? };
        return Ok(Line::Code(CodeStep { prefix, action: parse_action(op, &plain, args)? }));
    }
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
                "unknown transformation `{other}` (reorder, fuse, distribute, insert, interchange, reverse, skew, shift, reshape; then {})",
                OPS.join(", ")
            ))
        }
    };
    Ok(Line::Clay(step))
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
    use crate::clay::code::Action;
    use vocab::knobs::Wavefront;

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
        let code = vec![
            CodeStep { prefix: vec![0], action: Action::Tile { sizes: vec![32, 32, 256] } },
            CodeStep { prefix: vec![0], action: Action::PointOrder { order: vec![0, 2, 1] } },
            CodeStep { prefix: vec![0], action: Action::TileOrder { order: vec![1, 2, 0] } },
            CodeStep { prefix: vec![0], action: Action::Wavefront { kind: Wavefront::All } },
            CodeStep { prefix: vec![0], action: Action::UnrollJam { factor: 4 } },
            CodeStep { prefix: vec![0], action: Action::MicroTile { rows: 4, cols: 32 } },
            CodeStep { prefix: vec![0], action: Action::Fission },
            CodeStep { prefix: vec![0, 0], action: Action::Parallelize },
            CodeStep { prefix: vec![0, 0, 0], action: Action::Vectorize },
        ];
        let text: String = steps
            .iter()
            .map(|s| s.to_string())
            .chain(code.iter().map(|s| s.to_string()))
            .map(|s| format!("{s}   # comment\n"))
            .collect();
        assert_eq!(parse(&format!("# a script\n\n{text}")).unwrap(), Script { steps, code });
    }

    #[test]
    fn bad_lines_name_their_line_and_shape() {
        let e = parse("fuse (0)\nskew (1,0) 1\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("skew (PREFIX) DEPTH FACTOR"), "{e}");
        assert!(parse("tiles (0) 32").unwrap_err().reason.contains("unknown transformation `tiles`"));
        assert!(parse("tile (0) 32 0").unwrap_err().reason.contains("`0` is not a positive size"));
        assert!(parse("wavefront (0) some").unwrap_err().reason.contains("wavefront (PREFIX) single|all"));
        let e = parse("tile (0) 32\nfuse (0)\n").unwrap_err();
        assert!(e.line == 2 && e.reason.contains("come last"), "{e}");
        assert!(parse("fuse 0").unwrap_err().reason.contains("β-prefix"));
        assert!(parse("fuse (0,x)").unwrap_err().reason.contains("`x` is not an integer"));
    }
}
