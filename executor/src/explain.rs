//! A schedule and the code-generation options of a point as one script of steps on the
//! original program: the Clay steps to the schedule (`space::clay`), then what code
//! generation does with its loops, read from what it did (`Variant::bands`) on the banded
//! tree of the schedule's form, the tree `apply` generates code from. Replayed by
//! `space::clay::apply_script` and a [`CodegenOptions::plan`], the script gives the same
//! program again.

use model::deps::Dependences;
use model::isl::{new_context, IslError};
use model::scop::{Scop, Source};
use space::clay::{self, script, ClayError, ClayForm, CodeStep, Step};

use codegen::{self, CodegenError, CodegenOptions};

#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error(transparent)]
    Form(#[from] ClayError),
    #[error(transparent)]
    Explain(#[from] clay::ExplainError),
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error("code generation of the schedule's loops: {0}")]
    Codegen(#[from] CodegenError),
    #[error("code generation acted on a loop that the schedule's form does not name: {0}")]
    Unnamed(String),
}

/// The explanation of a schedule under some code-generation options.
#[derive(Debug, Clone)]
pub struct Explained {
    pub steps: Vec<Step>,
    pub code: Vec<CodeStep>,
    /// Both, as a script with the statements of each step in comments.
    pub script: String,
}

/// The script from `scop`'s original program to the schedule `tree` (isl's YAML text)
/// generated with `opts`.
pub fn explain(
    source: &Source,
    scop: &Scop,
    deps: &Dependences,
    tree: &str,
    opts: &CodegenOptions,
) -> Result<Explained, ExplainError> {
    let ctx = new_context();
    let original = ClayForm::original(&ctx, scop)?;
    let target = ClayForm::from_tree(&ctx, scop, tree)?;
    let steps = clay::explain(&original, &target)?;
    let banded = clay::to_banded_tree(&ctx, &target, scop, deps)?;
    let opts = CodegenOptions { plan: None, ..opts.clone() };
    let variant = codegen::generate(source, scop, deps, &banded, &opts)?;
    let code = variant
        .bands
        .iter()
        .map(|p| target.name(p).ok_or_else(|| ExplainError::Unnamed(p.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let script = script::print(&original, &steps, &code);
    Ok(Explained { steps, code, script })
}
