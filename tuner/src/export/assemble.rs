//! The exported file as text: the user's lines kept as they are, the SCoP's
//! lines replaced by the winners' block, and what the block needs at file
//! scope put just before the function that holds it. Nothing here runs a
//! compiler: `expand` (the statement macros) and the verification are the
//! callers'.

/// Where the SCoP and its function stand in the user's file (1-based lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The first line of the function definition that holds the SCoP.
    pub function_first: usize,
    /// Its last line (the closing brace).
    pub function_last: usize,
    /// The first line replaced: the `#pragma scop` line, or a region's
    /// first where `--autodetect` found it.
    pub scop_first: usize,
    /// The last: the `#pragma endscop` line, or the region's last.
    pub scop_last: usize,
    /// Whether the first and last lines are the pragmas (not code).
    pub marked: bool,
}

/// One machine's winner, its macros expanded and its names its own.
#[derive(Debug, Clone)]
pub struct Branch {
    /// A C identifier naming the machine (`-DPOLYTUNE_TARGET=<label>`).
    pub label: String,
    /// The CPU model its fingerprint names (how the run-time choice finds it).
    pub cpu_model: String,
    /// What was chosen and why, one line each.
    pub about: Vec<String>,
    /// `#pragma GCC target(...)` lines.
    pub target: String,
    /// File-scope declarations and `static` helper functions.
    pub file_scope: String,
    /// The block that replaces the SCoP.
    pub block: String,
}

/// What goes into the file: before the function, in place of the SCoP,
/// after the function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pieces {
    pub before: String,
    pub region: String,
    pub after: String,
}

/// `original` with `pieces` in place: every line outside the SCoP's lines
/// kept byte for byte and in order, `region` instead of the SCoP's lines.
pub fn splice(original: &str, layout: &Layout, pieces: &Pieces, region: &str) -> String {
    splice_all(original, &[(*layout, pieces, region)])
}

/// [`splice`] of several SCoPs of one file at once (their lines disjoint):
/// where two stand in one function, what each needs before and after it
/// goes there in the order given.
pub fn splice_all(original: &str, parts: &[(Layout, &Pieces, &str)]) -> String {
    let extra: usize = parts.iter().map(|(_, p, r)| p.before.len() + r.len() + p.after.len()).sum();
    let mut out = String::with_capacity(original.len() + extra);
    for (n, line) in original.split_inclusive('\n').enumerate() {
        let n = n + 1;
        for (layout, pieces, region) in parts {
            if n == layout.function_first {
                out.push_str(&pieces.before);
            }
            if n == layout.scop_first {
                out.push_str(region);
            }
        }
        if !parts.iter().any(|(layout, ..)| (layout.scop_first..=layout.scop_last).contains(&n)) {
            out.push_str(line);
            // A last line without its newline still ends before what follows.
            let after = parts.iter().any(|(l, p, _)| n == l.function_last && !p.after.is_empty());
            if after && !line.ends_with('\n') {
                out.push('\n');
            }
        }
        for (layout, pieces, _) in parts {
            if n == layout.function_last {
                out.push_str(&pieces.after);
            }
        }
    }
    out
}

/// The SCoP's lines of `original` (between its two pragma lines): the code
/// as the user wrote it (the fallback where no machine matches).
pub fn original_region(original: &str, layout: &Layout) -> String {
    let pragmas = usize::from(layout.marked);
    original
        .split_inclusive('\n')
        .enumerate()
        .filter(|(n, _)| (layout.scop_first + pragmas..=layout.scop_last - pragmas).contains(&(n + 1)))
        .map(|(_, l)| l)
        .collect()
}

/// The machines of one exported file, numbered from 1 in this order (a
/// C-identifier label and the CPU model of each), and the name of the
/// function that tells at run time which one runs the program. One table
/// for the whole file: every SCoP's region chooses by the same numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machines {
    pub labels: Vec<(String, String)>,
    pub chooser: String,
}

impl Machines {
    /// The machines of `branches`, each once, in their order; the chooser
    /// named after `function` (the first function that holds a region).
    pub fn of<'a>(branches: impl IntoIterator<Item = &'a Branch>, function: &str) -> Machines {
        let mut labels: Vec<(String, String)> = Vec::new();
        for b in branches {
            if !labels.iter().any(|(l, _)| *l == b.label) {
                labels.push((b.label.clone(), b.cpu_model.clone()));
            }
        }
        Machines { labels, chooser: format!("polytune_{function}_machine") }
    }
}

/// The pieces for one winner (no choice to make) or for several (chosen
/// by `-DPOLYTUNE_TARGET=<label>` at build time, else by the CPU model at
/// run time, else the original code). `function`: the C name of the
/// function holding the SCoP; `header`: the comment lines that say what
/// this is.
pub fn pieces(branches: &[Branch], function: &str, header: &[String], original: &str) -> Pieces {
    let machines = (branches.len() > 1).then(|| Machines::of(branches, function));
    let (before, after) = around(&[(branches, header)], machines.as_ref().map(|m| (m, true)));
    Pieces { before, region: region(branches, machines.as_ref(), original), after }
}

/// What stands before and after one function holding the SCoPs of `parts`
/// (each SCoP's branches and header): the headers; one `push_options`
/// with every target line once (a line twice is gcc's error), each under
/// its machine's build-time choice where there is a choice to make; the
/// choice itself where `choice` asks to define it (once per file); each
/// branch's file-scope code; one `pop_options`.
pub fn around(parts: &[(&[Branch], &[String])], choice: Option<(&Machines, bool)>) -> (String, String) {
    let gcc = "#if defined(__GNUC__) && !defined(__clang__)\n";
    let mut before: String = parts.iter().map(|(_, header)| comment(header, "")).collect();
    let branches = || parts.iter().flat_map(|(b, _)| b.iter());
    // Target lines by machine (`None`: for every machine), each once.
    let mut targets: Vec<(Option<&str>, Vec<&str>)> = Vec::new();
    for b in branches() {
        let machine = choice.map(|_| b.label.as_str());
        let at = match targets.iter().position(|(m, _)| *m == machine) {
            Some(at) => at,
            None => {
                targets.push((machine, Vec::new()));
                targets.len() - 1
            }
        };
        for line in b.target.split_inclusive('\n') {
            if !targets[at].1.contains(&line) {
                targets[at].1.push(line);
            }
        }
    }
    targets.retain(|(_, lines)| !lines.is_empty());
    let mut after = String::new();
    if !targets.is_empty() {
        before.push_str(&format!("{gcc}#pragma GCC push_options\n#endif\n"));
        after = format!("{gcc}#pragma GCC pop_options\n#endif\n");
    }
    if let Some((machines, true)) = choice {
        before.push_str(&choice_code(machines));
    }
    for (machine, lines) in &targets {
        match machine {
            None => before.push_str(&format!("{gcc}{}#endif\n", lines.concat())),
            Some(m) => before.push_str(&format!(
                "{gcc}#if defined(POLYTUNE_TARGET) && POLYTUNE_CHOSEN == POLYTUNE_MACHINE_{m}\n{}#endif\n#endif\n",
                lines.concat()
            )),
        }
    }
    for b in branches() {
        before.push_str(&b.file_scope);
    }
    (before, after)
}

/// The block that replaces one SCoP: its one branch where there is no
/// choice to make; else each of its machines' branches in turn (by the
/// file's numbers: `machines`) and the code as written for any other.
pub fn region(branches: &[Branch], machines: Option<&Machines>, original: &str) -> String {
    let Some(machines) = machines else {
        return branches.iter().map(|b| format!("{}{}", comment(&b.about, "  "), b.block)).collect();
    };
    let mut region = String::from(
        "{\n#if defined(POLYTUNE_TARGET)\n  const int polytune_machine = POLYTUNE_CHOSEN;\n#else\n",
    );
    region.push_str(&format!("  const int polytune_machine = {}();\n#endif\n", machines.chooser));
    for (k, b) in branches.iter().enumerate() {
        let keyword = if k == 0 { "if" } else { "else if" };
        region.push_str(&format!("  {keyword} (polytune_machine == POLYTUNE_MACHINE_{}) {{\n", b.label));
        region.push_str(&comment(&b.about, "  "));
        region.push_str(&b.block);
        region.push_str("  }\n");
    }
    let keyword = if branches.is_empty() { "{" } else { "else {" };
    region.push_str(&format!("  {keyword}\n  /* no machine of this export: the code as written */\n"));
    region.push_str(original);
    region.push_str("  }\n}\n");
    region
}

/// `lines` as a C comment, each line indented by `indent`.
fn comment(lines: &[String], indent: &str) -> String {
    let mut out = format!("{indent}/* ");
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str(&format!("\n{indent} * "));
        }
        out.push_str(&l.replace("*/", "* /"));
    }
    out.push_str(" */\n");
    out
}

/// The machines' numbers, the build-time choice and the run-time one.
fn choice_code(machines: &Machines) -> String {
    let chooser = &machines.chooser;
    let mut out = String::new();
    for (k, (label, _)) in machines.labels.iter().enumerate() {
        out.push_str(&format!("#define POLYTUNE_MACHINE_{label} {}\n", k + 1));
    }
    let labels: Vec<&str> = machines.labels.iter().map(|(l, _)| l.as_str()).collect();
    out.push_str(&format!(
        "#define POLYTUNE_PASTE_(a, b) a##b\n#define POLYTUNE_PASTE(a, b) POLYTUNE_PASTE_(a, b)\n\
         #define POLYTUNE_CHOSEN POLYTUNE_PASTE(POLYTUNE_MACHINE_, POLYTUNE_TARGET)\n\
         #if defined(POLYTUNE_TARGET) && !POLYTUNE_CHOSEN\n\
         #error \"POLYTUNE_TARGET names no machine of this export (known: {})\"\n#endif\n",
        labels.join(", ")
    ));
    let quoted =
        |xs: Vec<&str>| xs.iter().map(|x| format!("\"{}\"", c_string(x))).collect::<Vec<_>>().join(", ");
    let models = quoted(machines.labels.iter().map(|(_, m)| m.as_str()).collect());
    let n = machines.labels.len();
    out.push_str(&format!(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\
/* Which machine of this export runs the program: the one named by the\n \
* environment variable POLYTUNE_MACHINE, else the first whose CPU model is\n \
* the \"model name\" of /proc/cpuinfo; 0 for none. Asked once (threads that\n \
* race to ask find the same answer). */\n\
static int {chooser}(void)\n{{\n\
  static const char *const names[{n}] = {{ {names} }};\n\
  static const char *const models[{n}] = {{ {models} }};\n\
  static int known = -1;\n\
  if (known >= 0)\n    return known;\n\
  int found = 0;\n\
  const char *forced = getenv(\"POLYTUNE_MACHINE\");\n\
  if (forced) {{\n\
    for (int m = 0; m < {n}; m++)\n      if (!found && strcmp(forced, names[m]) == 0)\n        found = m + 1;\n\
  }} else {{\n\
    FILE *cpuinfo = fopen(\"/proc/cpuinfo\", \"r\");\n\
    char line[1024], model[1024];\n\
    while (cpuinfo && fgets(line, sizeof line, cpuinfo)) {{\n\
      char *colon = strchr(line, ':');\n\
      if (!colon || strncmp(line, \"model name\", 10) != 0)\n        continue;\n\
      /* The model's words joined by single spaces, as polytune's fingerprint reads it. */\n\
      int len = 0;\n\
      for (char *word = strtok(colon + 1, \" \\t\\n\"); word; word = strtok(NULL, \" \\t\\n\"))\n\
        len += snprintf(model + len, sizeof model - len, len ? \" %s\" : \"%s\", word);\n\
      for (int m = 0; m < {n}; m++)\n        if (!found && strcmp(model, models[m]) == 0)\n          found = m + 1;\n\
      break;\n\
    }}\n\
    if (cpuinfo)\n      fclose(cpuinfo);\n\
  }}\n\
  known = found;\n  return found;\n}}\n",
        names = quoted(labels),
    ));
    out
}

/// `s` as the inside of a C string literal.
fn c_string(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c if c.is_ascii_graphic() || c == ' ' => vec![c],
            _ => vec!['?'],
        })
        .collect()
}

/// A machine's name as a C identifier: other characters become `_`, and a
/// leading digit gets one before it.
pub fn label(name: &str) -> String {
    let mut l: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if l.is_empty() || l.starts_with(|c: char| c.is_ascii_digit()) {
        l.insert(0, '_');
    }
    l
}

/// Every identifier of ours (`polytune_…`) in `code` renamed `polytune_<tag>_…`,
/// so that the branches of several machines cannot clash at file scope.
pub fn rename(code: &str, tag: &str) -> String {
    let mut out = String::with_capacity(code.len() + 64);
    let bytes = code.as_bytes();
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < bytes.len() {
        if word(bytes[i]) {
            let start = i;
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            let w = &code[start..i];
            match w.strip_prefix("polytune_") {
                Some(rest) if !bytes[start].is_ascii_digit() => {
                    out.push_str(&format!("polytune_{tag}_{rest}"))
                }
                _ => out.push_str(w),
            }
        } else {
            let start = i;
            while i < bytes.len() && !word(bytes[i]) {
                i += 1;
            }
            out.push_str(&code[start..i]);
        }
    }
    out
}

/// The outlined functions' definitions (`void polytune_…(…)` at the start
/// of a line, not a declaration) made `static`: the user's program gets no
/// new external names.
pub fn make_static(helpers: &str) -> String {
    helpers
        .split_inclusive('\n')
        .map(|l| {
            if l.starts_with("void polytune_") && !l.trim_end().ends_with(';') {
                format!("static {l}")
            } else {
                l.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "#include <x.h>\n\nstatic int keep;\nvoid f(int n, double *a)\n{\n  int i;\n#pragma scop\n  for (i = 0; i < n; i++)\n    a[i] = 0;\n#pragma endscop\n  keep = i;\n}\nint main(void) { return 0; }";
    const LAYOUT: Layout =
        Layout { function_first: 4, function_last: 12, scop_first: 7, scop_last: 10, marked: true };

    fn branch(label: &str, target: &str) -> Branch {
        Branch {
            label: label.into(),
            cpu_model: format!("CPU {label}"),
            about: vec![format!("machine {label}")],
            target: target.into(),
            file_scope: format!("static void polytune_{label}_h(void) {{}}\n"),
            block: format!("{{ polytune_{label}_h(); }}\n"),
        }
    }

    /// Every line of the input outside the SCoP's, in order: what a test
    /// of an exported file checks too.
    fn kept_in_order(original: &str, layout: &Layout, exported: &str) -> bool {
        let mut rest = exported;
        for (n, line) in original.split_inclusive('\n').enumerate() {
            if (layout.scop_first..=layout.scop_last).contains(&(n + 1)) {
                continue;
            }
            match rest.find(line) {
                Some(at) => rest = &rest[at + line.len()..],
                None => return false,
            }
        }
        true
    }

    #[test]
    fn the_region_replaces_the_scop_lines_and_every_other_line_stays() {
        let p = pieces(&[branch("a", "")], "f", &["header".into()], &original_region(FILE, &LAYOUT));
        let out = splice(FILE, &LAYOUT, &p, &p.region);
        assert!(kept_in_order(FILE, &LAYOUT, &out), "{out}");
        assert!(!out.contains("#pragma scop") && !out.contains("a[i] = 0"), "{out}");
        // File scope before the function, the block where the SCoP was.
        let (before, rest) = out.split_once("void f(int n").unwrap();
        assert!(before.ends_with("static void polytune_a_h(void) {}\n"), "{before}");
        assert!(rest.contains("  int i;\n  /* machine a */\n{ polytune_a_h(); }\n  keep = i;"), "{rest}");
        assert!(out.ends_with("int main(void) { return 0; }"), "{out}");
    }

    #[test]
    fn target_pragmas_are_pushed_around_the_function_only() {
        let p = pieces(&[branch("a", "#pragma GCC target(\"tune=x\")\n")], "f", &[], "");
        let out = splice(FILE, &LAYOUT, &p, &p.region);
        let push = out.find("push_options").unwrap();
        let pop = out.find("pop_options").unwrap();
        assert!(push < out.find("void f(").unwrap() && pop > out.find("keep = i;\n}\n").unwrap(), "{out}");
        assert!(pop < out.find("int main").unwrap(), "{out}");
    }

    #[test]
    fn several_machines_are_chosen_at_build_time_or_run_time_with_the_original_last() {
        let original = original_region(FILE, &LAYOUT);
        assert_eq!(original, "  for (i = 0; i < n; i++)\n    a[i] = 0;\n");
        let p = pieces(&[branch("a", ""), branch("b", "")], "f", &[], &original);
        assert!(p.before.contains("#define POLYTUNE_MACHINE_a 1\n#define POLYTUNE_MACHINE_b 2\n"));
        assert!(p.before.contains("static int polytune_f_machine(void)"));
        assert!(p.before.contains("\"CPU a\", \"CPU b\""), "{}", p.before);
        let first = p.region.find("if (polytune_machine == POLYTUNE_MACHINE_a)").unwrap();
        let second = p.region.find("else if (polytune_machine == POLYTUNE_MACHINE_b)").unwrap();
        let fallback = p.region.find("else {").unwrap();
        assert!(first < second && second < fallback, "{}", p.region);
        assert!(p.region[fallback..].contains(&original));
    }

    /// Two SCoPs of one file, in two functions, on machines `a` and `b`,
    /// the second's winner on `b` the original: one table numbers both
    /// machines, the choice is defined once, and the second region runs
    /// `a`'s code on `a` only.
    #[test]
    fn several_scops_choose_by_one_table_of_machines() {
        let both = [branch("a", "#pragma GCC target(\"tune=x\")\n"), branch("b", "")];
        let machines = Machines::of(both.iter().chain(&both[..1]), "f");
        assert_eq!(machines.labels.len(), 2);
        let (first, _) = around(&[(&both, &[])], Some((&machines, true)));
        let (second, _) = around(&[(&both[..1], &[])], Some((&machines, false)));
        assert_eq!(first.matches("static int polytune_f_machine(void)").count(), 1, "{first}");
        assert!(!second.contains("polytune_f_machine") && !second.contains("#define"), "{second}");
        assert!(second.contains("POLYTUNE_CHOSEN == POLYTUNE_MACHINE_a\n#pragma GCC target"), "{second}");
        let region = region(&both[..1], Some(&machines), "  x = 1;\n");
        assert!(region.contains("if (polytune_machine == POLYTUNE_MACHINE_a) {"), "{region}");
        assert!(!region.contains("POLYTUNE_MACHINE_b") && region.contains("else {"), "{region}");
        assert!(region.contains("polytune_f_machine()") && region.contains("  x = 1;\n"), "{region}");
        // One machine: no choice, as for one SCoP.
        assert_eq!(super::region(&both[..1], None, ""), "  /* machine a */\n{ polytune_a_h(); }\n");
    }

    #[test]
    fn our_names_are_renamed_per_machine_and_definitions_made_static() {
        let code = "void polytune_outlined_f_7_0(long n);\nx = polytune_c1000 + my_polytune_x + polytune;\n";
        assert_eq!(
            rename(code, "m1"),
            "void polytune_m1_outlined_f_7_0(long n);\nx = polytune_m1_c1000 + my_polytune_x + polytune;\n"
        );
        let helpers = "void polytune_g(long n)\n{\n  void polytune_h(void);\n}\n";
        assert_eq!(make_static(helpers), "static void polytune_g(long n)\n{\n  void polytune_h(void);\n}\n");
        assert_eq!(label("epyc-2c.v2"), "epyc_2c_v2");
        assert_eq!(label("2x"), "_2x");
        assert_eq!(c_string("a \"b\" \\"), "a \\\"b\\\" \\\\");
    }
}
