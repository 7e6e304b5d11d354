//! A script replayed on a program: the schedule it describes, checked legal by the
//! independent test, or the step that broke it and the dependence it breaks.

use isl_rs::Context;

use super::code::{CodeStep, Planned};
use super::form::{ClayError, ClayForm};
use super::script::{self, ScriptError};
use super::transform::{Step, StepError};
use super::tree::to_tree;
use model::deps::Dependences;
use model::isl::IslError;
use model::legality::{violations, Violation};
use model::scop::Scop;

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Script(#[from] ScriptError),
    #[error(transparent)]
    Form(#[from] ClayError),
    #[error(transparent)]
    Isl(#[from] IslError),
    #[error("step {number} `{step}` does not apply: {reason}", number = .0 .0, step = .0 .1, reason = .0 .2)]
    Step(Box<(usize, Step, StepError)>),
    #[error("step {number} `{step}` names no loop of the schedule: {reason}")]
    Code { number: usize, step: CodeStep, reason: String },
    #[error(
        "the schedule is illegal from step {number} `{step}` on: it breaks the {} dependence from {from} to {to} (schedule distances that are not positive: {})",
        .violation.kind, .violation.bad_distances
    )]
    Illegal {
        number: usize,
        step: Step,
        /// The source and sink references in words (`S2's write of A[i][j]`).
        from: String,
        to: String,
        violation: Box<Violation>,
    },
}

/// What a legal script gives: the form, its schedule tree, and the code steps located
/// for code generation (empty: the script leaves tiling and the rest to the options).
pub struct Applied {
    pub form: ClayForm,
    pub tree: String,
    pub code: Vec<Planned>,
}

/// Replays `text` on `scop`'s original schedule and checks the result against `deps`.
pub fn apply_script(
    ctx: &Context,
    scop: &Scop,
    deps: &Dependences,
    text: &str,
) -> Result<Applied, ApplyError> {
    let script::Script { steps, code } = script::parse(text)?;
    let mut forms = vec![ClayForm::original(ctx, scop)?];
    for (n, step) in steps.iter().enumerate() {
        let mut next = forms[n].clone();
        next.apply(step).map_err(|e| ApplyError::Step(Box::new((n + 1, step.clone(), e))))?;
        forms.push(next);
    }
    let illegal = |form: &ClayForm| -> Result<Option<Violation>, IslError> {
        Ok(violations(ctx, &scop.context, &to_tree(form, scop), deps)?.into_iter().next())
    };
    let last = forms.last().expect("the original at least");
    let found = if steps.is_empty() { None } else { illegal(last)? };
    let Some(mut violation) = found else {
        let located = code.iter().enumerate().map(|(k, step)| {
            last.locate(step).map_err(|reason| ApplyError::Code {
                number: steps.len() + k + 1,
                step: step.clone(),
                reason,
            })
        });
        let code = located.collect::<Result<_, _>>()?;
        return Ok(Applied { tree: to_tree(last, scop), form: last.clone(), code });
    };
    // Intermediate schedules may be illegal (a loop distributed before it is fused back):
    // blame the step after which the schedule never became legal again.
    let mut number = steps.len();
    while number > 1 {
        match illegal(&forms[number - 1])? {
            Some(v) => {
                violation = v;
                number -= 1;
            }
            None => break,
        }
    }
    let (from, to) = (reference(scop, &violation.source), reference(scop, &violation.sink));
    Err(ApplyError::Illegal {
        number,
        step: steps[number - 1].clone(),
        from,
        to,
        violation: Box::new(violation),
    })
}

/// `S2's read of A[i - 1]` for the access id `ref3`.
fn reference(scop: &Scop, id: &str) -> String {
    for st in &scop.statements {
        if let Some(a) = st.accesses.iter().find(|a| a.id == id) {
            let kind = match a.kind {
                model::scop::AccessKind::Read => "read",
                model::scop::AccessKind::Write => "write",
            };
            return format!("{}'s {kind} of {}", st.name, a.text);
        }
    }
    id.to_string()
}
