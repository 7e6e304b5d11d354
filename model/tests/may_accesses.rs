//! May-accesses (pet's and Polly's): branches on data and subscripts that
//! are not affine, modelled so that no dependence is lost.

use model::deps::{self, Dependences};
use model::scop::{self, AccessKind, ExtractOptions, Scop};

fn load(name: &str) -> (Scop, Dependences) {
    let path = testkit::root().join("space/tests/fixtures/own").join(name);
    let (_, mut scops) =
        scop::extract(&path, &ExtractOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let s = scops.remove(0);
    let d = deps::analyze(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
    (s, d)
}

/// (kind, array, whether a may-access) of each access of statement `k`.
fn shape(s: &Scop, k: usize) -> Vec<(AccessKind, &str, bool)> {
    s.statements[k].accesses.iter().map(|a| (a.kind, a.array.as_str(), a.may.is_some())).collect()
}

/// A branch on data is kept (pet's and Polly's way): without a loop under
/// it, the whole `if` is one statement whose writes are may-writes, each
/// after a read of the element it may leave; with a loop, each statement
/// under it carries the condition.
#[test]
fn branches_on_data_make_may_writes() {
    let (s, d) = load("masked.c");
    let masked = &s.statements[0];
    assert_eq!(masked.text, "do { if (m[i] > 0)\n      y[i] = a * x[i] + y[i]; } while (0);");
    let shape: Vec<(AccessKind, &str, bool)> =
        masked.accesses.iter().map(|a| (a.kind, a.array.as_str(), a.may.is_some())).collect();
    use AccessKind::{Read, Write};
    let want = [
        (Read, "m", false),
        (Read, "a", false),
        (Read, "x", false),
        (Read, "y", false),
        (Read, "y", true),
        (Write, "y", true),
    ];
    assert_eq!(shape, want);
    assert!(
        masked.accesses[5].may.as_deref().unwrap().contains("which reads data"),
        "{:?}",
        masked.accesses[5]
    );
    // The clamp's two branches are one statement; the smoothing of x reads
    // x[i - 1], which the statement before wrote: a flow along i.
    assert_eq!(s.statements.len(), 3, "{:?}", s.statements.iter().map(|s| &s.text).collect::<Vec<_>>());
    let flows: Vec<&deps::Dependence> = d.of_kind(deps::DepKind::Flow).filter(|f| f.array == "x").collect();
    assert!(!flows.is_empty(), "{d:?}");
    let (s, _) = load("maskedrows.c");
    let guarded: Vec<&str> = s.statements.iter().map(|s| s.text.as_str()).collect();
    assert!(guarded[1].starts_with("do { if ((w[i] > 0)) s[i] += w[i] * A[i][j];"), "{guarded:?}");
    assert!(guarded[0] == "s[i] = 0;", "{guarded:?}");
}

/// `h[k[i]] += w[i]`, `x[col[i][j]]`, `y[p]` with `p` assigned in the SCoP,
/// `sq[i * i]`: any element of the declared extent, the subscript's reads
/// read by the statement, a write read first.
#[test]
fn subscripts_that_are_not_affine_touch_any_element_of_the_extent() {
    use AccessKind::{Read, Write};
    let (s, d) = load("histogram.c");
    // `+=` reads h[k[i]] (k, then h), then w; the write reads k again and
    // the elements it may leave.
    let want = [
        (Read, "k", false),
        (Read, "h", true),
        (Read, "w", false),
        (Read, "k", false),
        (Read, "h", true),
        (Write, "h", true),
    ];
    assert_eq!(shape(&s, 0), want);
    let write = &s.statements[0].accesses[5];
    assert!(write.relation.contains("0 <= polytune_o0 <= 63"), "{}", write.relation);
    assert!(write.may.as_deref().unwrap().contains("the subscript `k[i]` is not affine"), "{write:?}");
    // Every update may touch every bin: a dependence between any two iterations.
    assert!(d
        .of_kind(deps::DepKind::Flow)
        .any(|f| f.array == "h" && f.source == f.sink.replace("ref1", "ref5")));
    let (s, _) = load("ellpack.c");
    let gather = shape(&s, 1);
    assert!(gather.contains(&(Read, "col", false)) && gather.contains(&(Read, "x", true)), "{gather:?}");
    let (s, _) = load("scalarsub.c");
    assert_eq!(shape(&s, 1), [(Read, "x", false), (Read, "p", false), (Read, "y", true), (Write, "y", true)]);
    assert!(s.statements[2].accesses.iter().any(|a| a.may.as_deref().is_some_and(|w| w.contains("`i * i`"))));
}
