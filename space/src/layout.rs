//! Data layout: read-only matrices read through a transposed copy.
//!
//! A reference that walks a row-major matrix down its columns in the
//! innermost loop touches one element per cache line, and no schedule fixes
//! it when another reference of the same statement needs that loop
//! innermost (syrk's `A[j][k]` beside `C[i][j]`). A matrix the SCoP only
//! reads can be copied, transposed, at the region's start: the copy holds
//! the same values for the whole region, so every dependence stays as it
//! was, and the scheduler sees the copy's layout when it weighs spatial
//! proximity. Polly packs tiles of gemm's operands for the same reason;
//! a whole-matrix copy costs one pass over the matrix, which the variant's
//! measured time includes.

use std::collections::BTreeMap;

use isl_rs::{Context, Map};

use crate::spatial;
use model::isl::{IslError, IslResultExt};
use model::scop::text::{fold, squeeze, uses};
use model::scop::{isl_name, AccessKind, Array, Scop, TransposedCopy};

/// The name of `array`'s transposed copy.
pub fn copy_name(array: &str) -> String {
    format!("polytune_transposed_{array}")
}

/// How a reference walks its matrix along its statement's vector loop:
/// the loop of the write's column subscript (its innermost iterator
/// there), whose consecutive iterations write consecutive elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Down a column: the loop appears in the row subscript only.
    Against,
    /// Along a row: the loop appears in the column subscript.
    Along,
    /// Neither, or in a statement nested two loops deep or less, which
    /// reads each element about once: a copy costs it as much as its reads.
    Apart,
    /// A subscript isl cannot state as one affine form.
    Unknown,
}

/// Each reference of `scop` with how it walks its array.
fn walks(ctx: &Context, scop: &Scop) -> Result<Vec<(spatial::Reference, Walk)>, IslError> {
    let refs = spatial::references(ctx, scop)?;
    let mut out = Vec::with_capacity(refs.len());
    for (i, s) in scop.statements.iter().enumerate() {
        let mine: Vec<&spatial::Reference> = refs.iter().filter(|r| r.stmt == i).collect();
        let vector_loop = mine.iter().filter(|r| r.kind == AccessKind::Write).find_map(|r| {
            let last = r.subscripts.as_ref()?.last()?;
            last.0.iter().rposition(|&c| c != 0)
        });
        for r in mine {
            let walk = match &r.subscripts {
                None => Walk::Unknown,
                Some(subs) => match vector_loop.filter(|_| s.iterators.len() > 2 && subs.len() == 2) {
                    Some(l) if subs[1].0.get(l).is_some_and(|&c| c != 0) => Walk::Along,
                    Some(l) if subs[0].0.get(l).is_some_and(|&c| c != 0) => Walk::Against,
                    _ => Walk::Apart,
                },
            };
            out.push((r.clone(), walk));
        }
    }
    Ok(out)
}

/// The read-only matrices worth a transposed copy: those with more
/// references against their layout than along it ([`Walk`]; syrk's
/// `C[i][j] += A[i][k] * A[j][k]` reads `A[j][k]` down a column, `n`
/// times each element). Matrices with an unknown extent or a subscript isl
/// cannot state as one affine form, local ones, written ones and struct
/// members are never chosen.
pub fn candidates(ctx: &Context, scop: &Scop) -> Result<Vec<String>, IslError> {
    let mut votes: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for a in scop
        .arrays
        .iter()
        // A struct member's elements are not a matrix of their own in memory.
        .filter(|a| a.rank() == 2 && !a.written && !a.local && !a.is_struct_member())
        .filter(|a| a.extents.iter().all(|e| e.is_some()))
    {
        votes.insert(a.name.as_str(), (0, 0));
    }
    for (r, walk) in walks(ctx, scop)? {
        let Some(v) = votes.get_mut(r.array.as_str()) else { continue };
        match walk {
            Walk::Against => v.0 += 1,
            Walk::Along => v.1 = v.1.saturating_add(1),
            Walk::Unknown => *v = (0, usize::MAX),
            Walk::Apart => {}
        }
    }
    Ok(votes
        .into_iter()
        .filter(|(_, (against, along))| against > along)
        .map(|(a, _)| a.to_string())
        .collect())
}

/// `scop` with the references of each of `arrays` that walk it against
/// its layout reading its transposed copy instead (`A[j][k]` →
/// `copy[k][j]`, in the access relations and in the statements' text);
/// the other references read the array itself (syrk's `A[i][k]`, the same
/// element all along the vector loop). Where every reference the copy
/// serves is multiplied first by one scalar the SCoP does not write
/// (syr2k's `A[j][k]*alpha*B[i][k]`), the copy holds the products and the
/// statements read them: one multiplication per element at the copy
/// instead of one per use, with the same values (multiplication commutes
/// exactly). An array with a use the rewrite does not recognise is left
/// as it is; the result lists the copies it made in `Scop::copies`.
pub fn transpose(ctx: &Context, scop: &Scop, arrays: &[String]) -> Result<Scop, IslError> {
    let against: Vec<String> =
        walks(ctx, scop)?.into_iter().filter(|(_, w)| *w == Walk::Against).map(|(r, _)| r.id).collect();
    let mut out = scop.clone();
    for name in arrays {
        if let Some(next) = transpose_one(ctx, &out, name, &against)? {
            out = next;
        }
    }
    Ok(out)
}

/// `scop` with the references among `against` (access ids) to `name`
/// reading its copy; `None` where `name` is not a read-only matrix, no
/// reference is among them, or the statements' text disagrees with their
/// accesses.
fn transpose_one(
    ctx: &Context,
    scop: &Scop,
    name: &str,
    against: &[String],
) -> Result<Option<Scop>, IslError> {
    let Some(pos) = scop.arrays.iter().position(|a| a.name == name && a.rank() == 2 && !a.written) else {
        return Ok(None);
    };
    let copy = copy_name(name);
    let (isl_array, isl_copy) = (isl_name(name), isl_name(&copy));
    let swap = Map::read_from_str(ctx, &format!("{{ {isl_array}[a, b] -> {isl_copy}[b, a] }}"))
        .ctx(|| format!("transposing {name}"))?;
    let mut out = scop.clone();
    // Per statement that reads the copy: its index and the copy's references.
    let mut served: Vec<(usize, Vec<String>)> = Vec::new();
    for (i, s) in out.statements.iter_mut().enumerate() {
        let mut moved = Vec::new();
        let mut kept = Vec::new();
        for acc in s.accesses.iter_mut().filter(|a| a.array == name) {
            if acc.kind != AccessKind::Read {
                return Ok(None);
            }
            if !against.contains(&acc.id) {
                kept.push(squeeze(&acc.text));
                continue;
            }
            let Some(new_text) = transposed_reference(&acc.text, name, &copy) else { return Ok(None) };
            let what = || format!("transposing {}", acc.relation);
            let relation = Map::read_from_str(ctx, &acc.relation)
                .ctx(what)?
                .apply_range(swap.copy().ctx(what)?)
                .ctx(what)?;
            acc.relation = relation.to_str().ctx(what)?.to_string();
            acc.array = copy.clone();
            moved.push((squeeze(&acc.text), squeeze(&new_text)));
            acc.text = new_text;
        }
        if moved.is_empty() && kept.is_empty() {
            continue;
        }
        // Every use of the array in the text is one of its references:
        // those the copy serves are rewritten, the others kept.
        let Some(uses) = uses(&s.text, name, 2) else { return Ok(None) };
        let mut text = String::with_capacity(s.text.len() + 32);
        let mut at = 0;
        for u in uses {
            let spelled = squeeze(&s.text[u.start..u.end]);
            if let Some((_, new_text)) = moved.iter().find(|(old, _)| *old == spelled) {
                text.push_str(&s.text[at..u.start]);
                text.push_str(new_text);
                at = u.end;
            } else if !kept.contains(&spelled) {
                return Ok(None);
            }
        }
        text.push_str(&s.text[at..]);
        s.text = text;
        if !moved.is_empty() {
            served.push((i, moved.into_iter().map(|(_, new)| new).collect()));
        }
    }
    if served.is_empty() {
        return Ok(None);
    }
    let a = &scop.arrays[pos];
    let copy_array = Array {
        name: copy.clone(),
        element_type: a.element_type.clone(),
        extents: vec![a.extents[1].clone(), a.extents[0].clone()],
        written: false,
        local: false,
        linearised: false,
    };
    let written: Vec<String> = scop.arrays.iter().filter(|a| a.written).map(|a| a.name.clone()).collect();
    let bodies: Vec<(usize, String, Vec<String>)> =
        served.into_iter().map(|(i, refs)| (i, out.statements[i].text.clone(), refs)).collect();
    let factor = fold(&out, &copy_array, &written, &bodies).map(|(texts, factor)| {
        for ((i, _, _), text) in bodies.iter().zip(texts) {
            out.statements[*i].text = text;
        }
        factor
    });
    // The array stays where a statement still reads it itself.
    if out.statements.iter().any(|s| s.accesses.iter().any(|a| a.array == name)) {
        out.arrays.insert(pos + 1, copy_array);
    } else {
        out.arrays[pos] = copy_array;
    }
    out.copies.push(TransposedCopy { copy, of: name.to_string(), factor });
    Ok(Some(out))
}

/// `A[e0][e1]` → `copy[e1][e0]`; `None` when `text` is not the array's
/// name followed by exactly two bracketed subscripts.
fn transposed_reference(text: &str, name: &str, copy: &str) -> Option<String> {
    match &uses(text, name, 2)?[..] {
        [u] if u.start == text.len() - text.trim_start().len() && text[u.end..].trim().is_empty() => {
            let (e0, e1) = (&text[u.subscripts[0].clone()], &text[u.subscripts[1].clone()]);
            Some(format!("{copy}[{e1}][{e0}]"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_rewritten_only_where_they_start_an_identifier() {
        assert_eq!(transposed_reference("A[j][k]", "A", "T").as_deref(), Some("T[k][j]"));
        assert_eq!(transposed_reference("A [i+1] [B[k]]", "A", "T").as_deref(), Some("T[B[k]][i+1]"));
        assert_eq!(transposed_reference("A[j]", "A", "T"), None);
        assert_eq!(transposed_reference("A[j][k][l]", "A", "T"), None);
        assert_eq!(transposed_reference("BA[j][k]", "A", "T"), None);
    }

    fn syrk() -> Scop {
        let text = "void f(int n, int m, double alpha, double C[n][n], double A[n][m]) {\n\
            #pragma scop\n\
            for (int i = 0; i < n; i++)\n\
              for (int k = 0; k < m; k++)\n\
                for (int j = 0; j <= i; j++)\n\
                  C[i][j] += alpha * A[i][k] * A[j][k];\n\
            #pragma endscop\n}\n";
        model::scop::extract_preprocessed(std::path::Path::new("syrk.c"), text).unwrap().remove(0)
    }

    #[test]
    fn syrk_reads_a_down_its_columns_through_its_transpose() {
        let ctx = model::isl::new_context();
        let scop = syrk();
        assert_eq!(candidates(&ctx, &scop).unwrap(), vec!["A".to_string()]);
        let t = transpose(&ctx, &scop, &["A".into()]).unwrap();
        let s = &t.statements[0];
        // `A[i][k]` is the same element all along `j`: it reads A itself.
        assert_eq!(squeeze(&s.text), "C[i][j]+=alpha*A[i][k]*polytune_transposed_A[k][j];");
        let a = t.arrays.iter().find(|a| a.name == "polytune_transposed_A").unwrap();
        assert_eq!(a.extents, vec![Some("m".to_string()), Some("n".to_string())]);
        assert!(t.arrays.iter().any(|a| a.name == "A"));
        let copy = TransposedCopy { copy: "polytune_transposed_A".into(), of: "A".into(), factor: None };
        assert_eq!(t.copies, vec![copy]);
        let reads: Vec<&str> =
            s.accesses.iter().filter(|a| a.kind == AccessKind::Read).map(|a| a.relation.as_str()).collect();
        assert!(reads.iter().any(|r| r.contains("polytune_transposed_A[k, j]")), "{reads:?}");
        assert!(reads.iter().any(|r| r.contains("-> A[i, k]")), "{reads:?}");
        // The dependences of the copy's program are the original's: A was only read.
        let (before, after) = (model::deps::analyze(&scop).unwrap(), model::deps::analyze(&t).unwrap());
        assert_eq!(
            before.validity(&ctx).unwrap().to_str().unwrap().to_string(),
            after.validity(&ctx).unwrap().to_str().unwrap().to_string()
        );
    }

    #[test]
    fn syr2k_copies_hold_alphas_products() {
        let text = "void f(int n, int m, double alpha, double C[n][n], double A[n][m], double B[n][m]) {\n\
            #pragma scop\n\
            for (int i = 0; i < n; i++)\n\
              for (int k = 0; k < m; k++)\n\
                for (int j = 0; j <= i; j++)\n\
                  C[i][j] += A[j][k]*alpha*B[i][k] + B[j][k]*alpha*A[i][k];\n\
            #pragma endscop\n}\n";
        let scop =
            model::scop::extract_preprocessed(std::path::Path::new("syr2k.c"), text).unwrap().remove(0);
        let ctx = model::isl::new_context();
        assert_eq!(candidates(&ctx, &scop).unwrap(), vec!["A".to_string(), "B".to_string()]);
        let t = transpose(&ctx, &scop, &["A".into(), "B".into()]).unwrap();
        assert_eq!(
            squeeze(&t.statements[0].text),
            "C[i][j]+=polytune_transposed_A[k][j]*B[i][k]+polytune_transposed_B[k][j]*A[i][k];"
        );
        let factors: Vec<_> = t.copies.iter().map(|c| (c.of.as_str(), c.factor.as_deref())).collect();
        assert_eq!(factors, vec![("A", Some("alpha")), ("B", Some("alpha"))]);
        // Where the scalar multiplies one reference the copy serves and not
        // another, the copy holds the matrix itself.
        let other = text.replace("B[j][k]*alpha*A[i][k]", "A[j][k]*A[i][k]");
        let scop =
            model::scop::extract_preprocessed(std::path::Path::new("syr2k.c"), &other).unwrap().remove(0);
        let t = transpose(&ctx, &scop, &["A".into(), "B".into()]).unwrap();
        assert_eq!(
            squeeze(&t.statements[0].text),
            "C[i][j]+=polytune_transposed_A[k][j]*alpha*B[i][k]+polytune_transposed_A[k][j]*A[i][k];"
        );
        let copies: Vec<_> = t.copies.iter().map(|c| (c.of.as_str(), c.factor.as_deref())).collect();
        assert_eq!(copies, vec![("A", None)]);
    }

    #[test]
    fn gemm_and_written_arrays_are_not_transposed() {
        let text = "void f(int n, double C[n][n], double A[n][n], double B[n][n]) {\n\
            #pragma scop\n\
            for (int i = 0; i < n; i++)\n\
              for (int k = 0; k < n; k++)\n\
                for (int j = 0; j < n; j++)\n\
                  C[i][j] += A[i][k] * B[k][j] + C[j][i];\n\
            #pragma endscop\n}\n";
        let scop = model::scop::extract_preprocessed(std::path::Path::new("gemm.c"), text).unwrap().remove(0);
        let ctx = model::isl::new_context();
        assert!(candidates(&ctx, &scop).unwrap().is_empty());
        let t = transpose(&ctx, &scop, &["C".into()]).unwrap();
        assert!(t.copies.is_empty());
        // A matrix-vector product walks A down its columns, but reads each element once.
        let text = "void f(int n, double y[n], double A[n][n], double x[n]) {\n\
            #pragma scop\n\
            for (int j = 0; j < n; j++)\n\
              for (int i = 0; i < n; i++)\n\
                y[i] += A[i][j] * x[j];\n\
            #pragma endscop\n}\n";
        let scop = model::scop::extract_preprocessed(std::path::Path::new("mv.c"), text).unwrap().remove(0);
        assert!(candidates(&ctx, &scop).unwrap().is_empty());
    }
}
