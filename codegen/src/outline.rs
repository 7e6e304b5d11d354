//! `restrict=on` made to count: code moved into functions of their own whose
//! arrays are `restrict`-qualified *parameters*. gcc honours `restrict` on
//! parameters but not on block-scope pointers, nor on the variables an
//! OpenMP region captures; without it, every update of a register tile is
//! stored back and every loop-invariant factor reloaded, because a store to
//! `C` might change `A` (gemm's full tiles ran 2.9× slower on one core).
//!
//! With parallel loops, each parallel loop's body becomes a function (called
//! inside the `parallel for`, so its parameters are the thread's own); with
//! none, each outermost loop's body where there are register tiles (see
//! `Printer::outline_outermost`), else the whole region. Parameters: the
//! SCoP's size parameters (`long`), the loop iterators around the body
//! (`int`), every array as a restricted pointer to its rows (extents from
//! the declaration, sizes declared first), read-only scalars by value and
//! written ones by pointer (the name `#define`d to the dereference, so the
//! statements' text is unchanged). The model proves distinct arrays do not
//! overlap, which is what `restrict` tells the compiler. Each function is
//! declared at its call and defined after the program, with its own
//! statement macros.

use model::scop::{Array, Scop};

/// The signature shared by the functions of one region.
pub(super) struct Outliner {
    /// `polytune_outlined_kernel_gemm_12`: the function name's prefix.
    prefix: String,
    /// Size parameters, then arrays and scalars, as parameter declarations.
    pub(super) params: Vec<String>,
    pub(super) data: Vec<String>,
    /// The call's arguments for `params` and `data`.
    pub(super) param_args: Vec<String>,
    pub(super) data_args: Vec<String>,
    /// The statement macros and `#define nrm (*polytune_p_nrm)` for written
    /// scalars, put before each function's code, and their `#undef`s after.
    pub(super) defines: String,
    pub(super) undefs: String,
    /// Every function made so far, defined after the program.
    pub(super) definitions: Vec<String>,
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An extent a parameter list can state: arithmetic on integer literals
/// and size parameters (PolyBench's `2000 + 0`, `n`).
pub(super) fn stated_extent(extent: &str, params: &[String]) -> bool {
    let words = extent.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty());
    let operators = extent.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || " \t+-*/%()".contains(c));
    operators
        && words
            .into_iter()
            .all(|w| w.starts_with(|c: char| c.is_ascii_digit()) || params.iter().any(|p| p == w))
}

impl Outliner {
    /// `None` where a function of the region cannot be written: a SCoP at
    /// file scope, a name that is not a plain identifier, or an array whose
    /// row extents are not literals or size parameters (a pointer to
    /// pointers, a local extent).
    pub(super) fn new(scop: &Scop, macros: &str, undef_macros: &str) -> Option<Outliner> {
        if scop.is_fragment() || !scop.params.iter().all(|p| is_identifier(p)) {
            return None;
        }
        let mut data = Vec::new();
        let mut data_args = Vec::new();
        let (mut defines, mut undefs) = (macros.to_string(), String::new());
        for a in &scop.arrays {
            let Array { name, element_type: ty, extents, written, .. } = a;
            if !is_identifier(name) {
                return None;
            }
            match extents.len() {
                0 if *written => {
                    data.push(format!("{ty} *polytune_p_{name}"));
                    data_args.push(format!("&{name}"));
                    defines.push_str(&format!("#define {name} (*polytune_p_{name})\n"));
                    undefs.push_str(&format!("#undef {name}\n"));
                }
                0 => {
                    data.push(format!("{ty} {name}"));
                    data_args.push(name.clone());
                }
                // One-dimensional in C, its statements' subscripts linear.
                // A read-only array may be `const` in the user's code: the
                // call casts it (the outlined body only reads it).
                _ if a.linearised => {
                    data.push(format!("{ty} *__restrict__ {name}"));
                    data_args.push(if *written { name.clone() } else { format!("({ty} *) {name}") });
                }
                _ => {
                    let mut rows = String::new();
                    for e in &extents[1..] {
                        match e {
                            Some(e) if stated_extent(e, &scop.params) => {
                                rows.push_str(&format!("[{}]", e.trim()))
                            }
                            _ => return None,
                        }
                    }
                    data.push(format!("{ty} (*__restrict__ {name}){rows}"));
                    data_args.push(if *written { name.clone() } else { format!("({ty} (*){rows}) {name}") });
                }
            }
        }
        let function =
            scop.function.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
        Some(Outliner {
            prefix: format!("polytune_outlined_{function}_{}", scop.start.line),
            params: scop.params.iter().map(|p| format!("long {p}")).collect(),
            data,
            param_args: scop.params.clone(),
            data_args,
            defines,
            undefs: undefs + undef_macros,
            definitions: Vec::new(),
        })
    }

    /// This outliner with functions named `prefix_N`.
    pub(super) fn renamed(self, prefix: &str) -> Outliner {
        Outliner { prefix: prefix.to_string(), ..self }
    }

    /// Makes a function of `code` (statement calls and loops, inside the
    /// loops of `iterators`); returns the lines that declare and call it.
    pub(super) fn function(&mut self, iterators: &[String], code: &str) -> String {
        let name = format!("{}_{}", self.prefix, self.definitions.len());
        let its = iterators.iter().map(|i| format!("int {i}"));
        let decls: Vec<String> =
            self.params.iter().cloned().chain(its).chain(self.data.iter().cloned()).collect();
        let signature = format!("void {name}({})", decls.join(", "));
        let args: Vec<&str> = self
            .param_args
            .iter()
            .map(String::as_str)
            .chain(iterators.iter().map(String::as_str))
            .chain(self.data_args.iter().map(String::as_str))
            .collect();
        self.definitions.push(format!("{signature}\n{{\n{}{code}{}}}\n", self.defines, self.undefs));
        format!("{signature};\n{name}({});\n", args.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_of_literals_and_size_parameters_are_stated() {
        let params = vec!["n".to_string(), "m_1".to_string()];
        for e in ["2000 + 0", "n", "(m_1 + 1) * 2", "1200UL", "n*2"] {
            assert!(stated_extent(e, &params), "{e}");
        }
        for e in ["k", "n + k", "sizeof(double)", "a[2]", "n ? 1 : 2"] {
            assert!(!stated_extent(e, &params), "{e}");
        }
    }
}
