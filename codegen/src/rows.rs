//! Row views: a linearised array (`double *C` indexed `C[i * n + j]`, which
//! the model reads as rows of `n`) spelled in a CPU variant as the rows it
//! is. The region declares the name again as a pointer to rows over the
//! same memory, and the statements index it `C[i][j]`. gcc's vectoriser
//! sees a tile's rows as contiguous in that spelling and not in the linear
//! one (the matrix product of `space/tests/fixtures/own/linmatmul.c` ran
//! 1.37× slower than its two-dimensional twin, docs/performance.md), and
//! the rewrites that retarget subscripts (packing, accumulators, outlined
//! functions' parameters) serve the array as they serve any other.
//!
//! Only the region sees the view: the dumps, the captures and the code
//! outside keep the user's pointer.

use isl_rs::{Context, DimType, Set};
use model::isl::IslResultExt;
use model::scop::text::{squeeze, uses};
use model::scop::{isl_name, Scop};

use super::outline::stated_extent;
use super::CodegenError;

/// The SCoP with its viewable arrays two-dimensional in the model's rows,
/// and the arrays viewed: each C name with its rows (`[n]`).
pub(super) struct RowViews {
    pub(super) scop: Scop,
    viewed: Vec<(String, String)>,
}

impl RowViews {
    /// `code` (the region's) inside the block that declares the views:
    /// each name first copied to a flat pointer, then declared again as
    /// rows of that pointer, so that the view's initialiser does not read
    /// itself.
    pub(super) fn wrap(&self, code: &str) -> String {
        let mut out = String::from("  {\n");
        for (name, _) in &self.viewed {
            out.push_str(&format!("  __typeof__(&{name}[0]) polytune_flat_{name} = {name};\n"));
        }
        out.push_str("  {\n");
        for (name, rows) in &self.viewed {
            let element = format!("__typeof__(polytune_flat_{name}[0])");
            out.push_str(&format!(
                "  {element} (*{name}){rows} = ({element} (*){rows}) polytune_flat_{name};\n"
            ));
        }
        out.push_str(code);
        out.push_str("  }\n  }\n");
        out
    }
}

/// The row views of `scop`'s linearised arrays, where every use of the
/// array in the statements is one of its accesses with one affine
/// subscript per row (a may-access of a data-dependent subscript, or the
/// array passed whole to a function, keeps it linear); `None` where no
/// array has one.
pub(super) fn views(ctx: &Context, scop: &Scop) -> Result<Option<RowViews>, CodegenError> {
    let candidates: Vec<(&str, String)> = scop
        .arrays
        .iter()
        .filter(|a| a.linearised && a.rank() > 1 && !a.is_struct_member() && !a.local)
        .filter_map(|a| {
            let rows: Option<String> = a.extents[1..]
                .iter()
                .map(|e| e.as_deref().filter(|e| stated_extent(e, &scop.params)).map(|e| format!("[{e}]")))
                .collect();
            Some((a.name.as_str(), rows?))
        })
        .collect();
    if candidates.is_empty() {
        return Ok(None);
    }
    let subscripts = row_subscripts(ctx, scop)?;
    let mut out = scop.clone();
    let mut viewed = Vec::new();
    'arrays: for (name, rows) in candidates {
        let mut texts = Vec::new();
        for s in &out.statements {
            let refs: Vec<(String, &Vec<String>)> = s
                .accesses
                .iter()
                .filter(|a| a.array == name)
                .filter_map(|a| Some((squeeze(&a.text), subscripts.get(&a.id)?.as_ref()?)))
                .collect();
            let Some(text) = viewed_text(&s.text, name, &refs) else { continue 'arrays };
            texts.push(text);
        }
        for (s, text) in out.statements.iter_mut().zip(texts) {
            s.text = text;
            for a in s.accesses.iter_mut().filter(|a| a.array == name) {
                let subs = subscripts[&a.id].as_ref().expect("an access rewritten in its statement");
                a.text = element(name, subs);
            }
        }
        out.arrays.iter_mut().filter(|a| a.name == name).for_each(|a| a.linearised = false);
        viewed.push((name.to_string(), rows));
    }
    Ok((!viewed.is_empty()).then_some(RowViews { scop: out, viewed }))
}

/// `text` with every use of `array` (one linear subscript) spelled as rows,
/// where each is one of `refs` (squeezed text, its subscripts in C).
fn viewed_text(text: &str, array: &str, refs: &[(String, &Vec<String>)]) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for u in uses(text, array, 1)? {
        let spelled = squeeze(&text[u.start..u.end]);
        let (_, rows) = refs.iter().find(|(r, _)| *r == spelled)?;
        out.push_str(&text[at..u.start]);
        out.push_str(&element(array, rows));
        at = u.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

fn element(array: &str, rows: &[String]) -> String {
    let subscripts: String = rows.iter().map(|s| format!("[{s}]")).collect();
    format!("{array}{subscripts}")
}

/// Each access's subscripts, one per dimension of the model, in C (the
/// statement's iterators and the SCoP's parameters); `None` for one that
/// is not a single affine function (a may-access), by access id.
fn row_subscripts(
    ctx: &Context,
    scop: &Scop,
) -> Result<std::collections::HashMap<String, Option<Vec<String>>>, CodegenError> {
    let what = || "the subscripts of linearised arrays".to_string();
    let refs = space::spatial::references(ctx, scop)?;
    // The parameters in the order of the context the subscripts are aligned with.
    let space = Set::read_from_str(ctx, &scop.context).ctx(what)?.get_space().ctx(what)?;
    let mut params = Vec::new();
    for p in 0..space.dim(DimType::Param).ctx(what)? {
        let isl = space.get_dim_name(DimType::Param, p as u32).ctx(what)?.to_string();
        params.push(scop.params.iter().find(|c| isl_name(c) == isl).cloned().unwrap_or(isl));
    }
    let mut out = std::collections::HashMap::new();
    for r in refs {
        let its = &scop.statements[r.stmt].c_iterators;
        let c = r.subscripts.map(|subs| {
            subs.iter()
                .map(|(iterators, ps, constant)| {
                    let terms = iterators.iter().zip(its).chain(ps.iter().zip(&params));
                    affine_c(terms.map(|(c, n)| (*c, n.as_str())), *constant)
                })
                .collect()
        });
        out.insert(r.id, c);
    }
    Ok(out)
}

/// `c0 * x0 + c1 * x1 + ... + constant` in C, without the zero terms.
fn affine_c<'a>(terms: impl Iterator<Item = (i64, &'a str)>, constant: i64) -> String {
    let mut out = String::new();
    for (c, name) in terms.filter(|(c, _)| *c != 0) {
        match (out.is_empty(), c < 0) {
            (true, true) => out.push('-'),
            (true, false) => {}
            (false, true) => out.push_str(" - "),
            (false, false) => out.push_str(" + "),
        }
        if c.unsigned_abs() != 1 {
            out.push_str(&format!("{} * ", c.unsigned_abs()));
        }
        out.push_str(name);
    }
    match (out.is_empty(), constant) {
        (true, c) => c.to_string(),
        (false, 0) => out,
        (false, c) if c < 0 => format!("{out} - {}", c.unsigned_abs()),
        (false, c) => format!("{out} + {c}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_subscripts_are_spelled_without_zero_terms() {
        assert_eq!(affine_c([(1, "i"), (0, "j")].into_iter(), 0), "i");
        assert_eq!(affine_c([(-1, "i"), (2, "n")].into_iter(), -1), "-i + 2 * n - 1");
        assert_eq!(affine_c([(0, "i")].into_iter(), 3), "3");
        assert_eq!(affine_c(std::iter::empty(), 0), "0");
    }
}
