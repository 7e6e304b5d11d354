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
use model::scop::{isl_name, AccessKind, Array, Scop, TransposedCopy};

/// The name of `array`'s transposed copy.
pub fn copy_name(array: &str) -> String {
    format!("polytune_transposed_{array}")
}

/// The read-only matrices worth a transposed copy. In a statement that
/// writes an array element, the loop of the write's column subscript (its
/// innermost iterator there) is the one to vectorise: consecutive
/// iterations write consecutive elements. A read of a matrix that this
/// loop walks down a column (it appears in the row subscript only) is
/// against the layout, one in the column subscript along it. Matrices with
/// more references against than along are chosen, counting only
/// statements nested deeper than two loops, which read each element many
/// times (syrk's `C[i][j] += A[i][k] * A[j][k]` reads `A` n times):
/// elsewhere the copy costs as much as the statement's own reads.
/// Matrices with an unknown extent or a subscript isl cannot state as one
/// affine form, local ones, written ones and struct members are never chosen.
pub fn candidates(ctx: &Context, scop: &Scop) -> Result<Vec<String>, IslError> {
    let refs = spatial::references(ctx, scop)?;
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
    for (i, s) in scop.statements.iter().enumerate() {
        let mine: Vec<&spatial::Reference> = refs.iter().filter(|r| r.stmt == i).collect();
        // The write's column loop: the innermost iterator of its last subscript.
        let vector_loop = mine.iter().filter(|r| r.kind == AccessKind::Write).find_map(|r| {
            let last = r.subscripts.as_ref()?.last()?;
            last.0.iter().rposition(|&c| c != 0)
        });
        for r in &mine {
            let Some(v) = votes.get_mut(r.array.as_str()) else { continue };
            let Some(subs) = &r.subscripts else {
                *v = (0, usize::MAX);
                continue;
            };
            let Some(l) = vector_loop.filter(|_| s.iterators.len() > 2 && subs.len() == 2) else { continue };
            if subs[1].0.get(l).is_some_and(|&c| c != 0) {
                v.1 = v.1.saturating_add(1);
            } else if subs[0].0.get(l).is_some_and(|&c| c != 0) {
                v.0 += 1;
            }
        }
    }
    Ok(votes
        .into_iter()
        .filter(|(_, (against, along))| against > along)
        .map(|(a, _)| a.to_string())
        .collect())
}

/// `scop` with each of `arrays` read through its transposed copy: the copy
/// replaces the array in `arrays`, in every access relation (`A[a, b]` →
/// `copy[b, a]`) and in the statements' text (`A[j][k]` → `copy[k][j]`).
/// An array whose references cannot be rewritten in the text (a subscript
/// the rewrite does not recognise, a use that is not a reference) is left
/// as it is; the result lists the copies it made in `Scop::copies`.
pub fn transpose(ctx: &Context, scop: &Scop, arrays: &[String]) -> Result<Scop, IslError> {
    let mut out = scop.clone();
    for name in arrays {
        if let Some(next) = transpose_one(ctx, &out, name)? {
            out = next;
        }
    }
    Ok(out)
}

fn transpose_one(ctx: &Context, scop: &Scop, name: &str) -> Result<Option<Scop>, IslError> {
    let Some(pos) = scop.arrays.iter().position(|a| a.name == name && a.rank() == 2 && !a.written) else {
        return Ok(None);
    };
    let copy = copy_name(name);
    let (isl_array, isl_copy) = (isl_name(name), isl_name(&copy));
    let swap = Map::read_from_str(ctx, &format!("{{ {isl_array}[a, b] -> {isl_copy}[b, a] }}"))
        .ctx(|| format!("transposing {name}"))?;
    let mut out = scop.clone();
    for s in &mut out.statements {
        let mut text = s.text.clone();
        for acc in s.accesses.iter_mut().filter(|a| a.array == name) {
            if acc.kind != AccessKind::Read {
                return Ok(None);
            }
            let Some(new_text) = transposed_reference(&acc.text, name, &copy) else { return Ok(None) };
            text = replace_reference(&text, &acc.text, &new_text);
            let what = || format!("transposing {}", acc.relation);
            let relation = Map::read_from_str(ctx, &acc.relation)
                .ctx(what)?
                .apply_range(swap.copy().ctx(what)?)
                .ctx(what)?;
            acc.relation = relation.to_str().ctx(what)?.to_string();
            acc.array = copy.clone();
            acc.text = new_text;
        }
        // Every use of the array must have been one of its references.
        if mentions(&text, name) {
            return Ok(None);
        }
        s.text = text;
    }
    let a = &scop.arrays[pos];
    out.arrays[pos] = Array {
        name: copy.clone(),
        element_type: a.element_type.clone(),
        extents: vec![a.extents[1].clone(), a.extents[0].clone()],
        written: false,
        local: false,
    };
    out.copies.push(TransposedCopy { copy, of: name.to_string() });
    Ok(Some(out))
}

/// `A[e0][e1]` → `copy[e1][e0]`; `None` when `text` is not the array's
/// name followed by exactly two bracketed subscripts.
fn transposed_reference(text: &str, name: &str, copy: &str) -> Option<String> {
    let rest = text.trim().strip_prefix(name)?;
    let (e0, rest) = bracketed(rest.trim_start())?;
    let (e1, rest) = bracketed(rest.trim_start())?;
    rest.trim().is_empty().then(|| format!("{copy}[{e1}][{e0}]"))
}

/// The contents of the leading `[...]` of `s` (brackets balanced) and what follows it.
fn bracketed(s: &str) -> Option<(&str, &str)> {
    let inner = s.strip_prefix('[')?;
    let mut depth = 1;
    for (i, c) in inner.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&inner[..i], &inner[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with each occurrence of `from` that starts an identifier replaced by `to`.
fn replace_reference(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text;
    let mut prev: Option<u8> = None;
    while let Some(i) = rest.find(from) {
        let before = if i > 0 { Some(rest.as_bytes()[i - 1]) } else { prev };
        out.push_str(&rest[..i]);
        if before.is_some_and(is_ident_byte) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        prev = from.as_bytes().last().copied();
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether `name` occurs in `text` as a whole identifier.
fn mentions(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    text.match_indices(name).any(|(i, _)| {
        let before = i == 0 || !is_ident_byte(b[i - 1]);
        let after = b.get(i + name.len()).is_none_or(|&c| !is_ident_byte(c));
        before && after
    })
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
        assert_eq!(replace_reference("BA[j][k] + A[j][k]", "A[j][k]", "T[k][j]"), "BA[j][k] + T[k][j]");
        assert!(mentions("x = A[0]", "A") && !mentions("x = AB + _A", "A"));
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
    fn syrk_reads_a_through_its_transpose() {
        let ctx = model::isl::new_context();
        let scop = syrk();
        assert_eq!(candidates(&ctx, &scop).unwrap(), vec!["A".to_string()]);
        let t = transpose(&ctx, &scop, &["A".into()]).unwrap();
        let s = &t.statements[0];
        assert_eq!(
            s.text.split_whitespace().collect::<String>(),
            "C[i][j]+=alpha*polytune_transposed_A[k][i]*polytune_transposed_A[k][j];"
        );
        let a = t.arrays.iter().find(|a| a.name == "polytune_transposed_A").unwrap();
        assert_eq!(a.extents, vec![Some("m".to_string()), Some("n".to_string())]);
        assert!(t.arrays.iter().all(|a| a.name != "A"));
        assert_eq!(t.copies, vec![TransposedCopy { copy: "polytune_transposed_A".into(), of: "A".into() }]);
        let reads: Vec<&str> =
            s.accesses.iter().filter(|a| a.kind == AccessKind::Read).map(|a| a.relation.as_str()).collect();
        assert!(reads.iter().any(|r| r.contains("polytune_transposed_A[k, j]")), "{reads:?}");
        // The dependences of the copy's program are the original's: A was only read.
        let (before, after) = (model::deps::analyze(&scop).unwrap(), model::deps::analyze(&t).unwrap());
        assert_eq!(
            before.validity(&ctx).unwrap().to_str().unwrap().to_string(),
            after.validity(&ctx).unwrap().to_str().unwrap().to_string()
        );
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
