//! The text of a contraction's statements and helpers on tensor cores:
//! the macros its grafted statements expand to (the same in the kernel's
//! code for the GPU and in its emulation) and the helpers they call, once
//! as `wmma` device functions and once as C macros that compute, lane by
//! lane, what the fragments hold (see the parent module for the order of
//! additions).

use super::super::super::print::MACRO_PREFIX;
use super::super::shared::{slot, Helpers, Staged};
use super::{Contraction, Plan, ACC_TYPE};

/// The names of one contraction's statements, macros and helpers: `tag`
/// is the kernel's number and the contraction's in it (`0_1`).
pub(super) struct Names {
    pub(super) tag: String,
    pub(super) step: String,
    pub(super) zero: String,
    pub(super) store: String,
    pub(super) add: String,
    pub(super) acc: String,
    pub(super) smem: String,
    pub(super) lin: String,
}

impl Names {
    pub(super) fn new(tag: String) -> Names {
        let n = |what: &str| format!("{what}_{tag}");
        Names {
            step: n("mma"),
            zero: n("mma_zero"),
            store: n("mma_store"),
            add: n("mma_add"),
            acc: n("polytune_mma_acc"),
            smem: n("polytune_mma_smem"),
            lin: n("polytune_mma_lin"),
            tag,
        }
    }
}

/// The operand `X` (`Y`: `x = false`) of a step as its fragment load reads
/// it: the buffer's element at the step's first row (column) and `k`, its
/// leading dimension, and the strides of a row (column) and of `k` in it.
fn operand(con: &Contraction, plan: &Plan, x: bool) -> (String, i64, i64, i64) {
    let (k_first, buffer, along) =
        if x { (con.x_k_first, &plan.x_buffer, plan.ti) } else { (con.y_k_first, &plan.y_buffer, plan.tj) };
    // The step's macro arguments: a0 = k0, a1 = m0, a2 = n0.
    let (k, other) = (slot("a0", (1, plan.tk)), slot(if x { "a1" } else { "a2" }, (1, along)));
    match k_first {
        true => (format!("&{buffer}{k}{other}"), along, 1, along),
        false => (format!("&{buffer}{other}{k}"), plan.tk, plan.tk, 1),
    }
}

/// The macros of the statements the plan grafted (the AST calls them with
/// `MACRO_PREFIX`), each as its name with parameters and its body: the
/// steps, the zeroing, the store and the add, the thread's index, and the
/// stage's buffers as members of the union. `step_depth`, `depth`: the
/// outer schedule values of a step and of the stage loop.
pub(super) fn macros(
    names: &Names,
    con: &Contraction,
    plan: &Plan,
    (step_depth, depth): (usize, usize),
    staged: &[Staged],
    lin: &str,
) -> Vec<(String, String)> {
    let (acc, smem, lin_name, tag) = (&names.acc, &names.smem, &names.lin, &names.tag);
    let ds: Vec<String> = (0..step_depth).map(|d| format!("d{d}")).collect();
    let steps_args = ds.iter().cloned().chain(["a0", "a1", "a2"].map(String::from)).collect::<Vec<_>>();
    let (a, ..) = operand(con, plan, true);
    let (b, ..) = operand(con, plan, false);
    let its = &con.stmt.c_iterators;
    let add_args: Vec<String> = (0..depth)
        .map(|d| format!("polytune_d{d}"))
        .chain([its[con.r].clone(), its[con.c].clone()])
        .collect();
    let out = |r: &str, c: &str| format!("{smem}.polytune_out[{r}][{c}]");
    let warp = format!("({lin_name} / 32)");
    let mut out_macros = vec![
        (lin_name.trim_start_matches(MACRO_PREFIX).to_string(), format!("({lin})")),
        (
            format!("{}({})", names.step, steps_args.join(", ")),
            format!("polytune_wmma_step_{tag}({acc}, {a}, {b}, {lin_name} % 32)"),
        ),
        (format!("{}(...)", names.zero), format!("polytune_wmma_zero_{tag}({acc})")),
        (
            format!("{}(...)", names.store),
            format!(
                "polytune_wmma_store_{tag}({acc}, &{}, {lin_name} % 32)",
                out(
                    &format!("{} * ({warp} / {})", plan.wm, plan.wc),
                    &format!("{} * ({warp} % {})", plan.wn, plan.wc)
                )
            ),
        ),
        (
            format!("{}({})", names.add, add_args.join(", ")),
            format!(
                "{} += {}",
                plan.target,
                out(
                    &format!("(unsigned long) ({}) % {}", its[con.r], plan.ti),
                    &format!("(unsigned long) ({}) % {}", its[con.c], plan.tj)
                )
            ),
        ),
    ];
    for b in staged {
        let name = b.buffer.trim_start_matches(MACRO_PREFIX).to_string();
        out_macros.push((name, format!("({smem}.polytune_in.{})", b.buffer)));
    }
    out_macros
}

/// The helpers a contraction's macros call, in both forms (see the
/// module's documentation for the emulation's order of additions).
pub(super) fn helpers(names: &Names, con: &Contraction, plan: &Plan) -> Helpers {
    let tag = &names.tag;
    let (fm, fn_) = (plan.wm / 8, plan.wn / 8);
    let (_, lda, am, ak) = operand(con, plan, true);
    let (_, ldb, bn, bk) = operand(con, plan, false);
    let ldo = plan.tj;
    let each = "for (int polytune_m = 0; polytune_m < FM; polytune_m++) \
                for (int polytune_n = 0; polytune_n < FN; polytune_n++) \
                for (int polytune_e = 0; polytune_e < 2; polytune_e++)";
    let frag = "polytune_s[polytune_m * FN + polytune_n].x[polytune_e]";
    let lane = "const int polytune_row = (lane) / 4, polytune_col = 2 * ((lane) % 4);";
    let emulated = format!(
        "#define polytune_wmma_zero_{tag}(acc) do {{ {ACC_TYPE} *polytune_z = (acc); \
         for (int polytune_f = 0; polytune_f < {frags}; polytune_f++) \
         polytune_z[polytune_f].x[0] = polytune_z[polytune_f].x[1] = 0.0; }} while (0)\n\
         #define polytune_wmma_step_{tag}(acc, a, b, lane) do {{ {ACC_TYPE} *polytune_s = (acc); \
         const double *polytune_a = (a), *polytune_b = (b); {lane} {each} {{ double polytune_v = {frag}; \
         for (int polytune_k = 0; polytune_k < 4; polytune_k++) polytune_v += \
         polytune_a[(8 * polytune_m + polytune_row) * {am} + polytune_k * {ak}] * \
         polytune_b[polytune_k * {bk} + (8 * polytune_n + polytune_col + polytune_e) * {bn}]; \
         {frag} = polytune_v; }} }} while (0)\n\
         #define polytune_wmma_store_{tag}(acc, out, lane) do {{ const {ACC_TYPE} *polytune_s = (acc); \
         double *polytune_o = (out); {lane} {each} \
         polytune_o[(8 * polytune_m + polytune_row) * {ldo} + 8 * polytune_n + polytune_col + polytune_e] = {frag}; \
         }} while (0)\n",
        frags = fm * fn_,
    )
    .replace("FM", &fm.to_string())
    .replace("FN", &fn_.to_string());
    let undef = format!(
        "#undef polytune_wmma_zero_{tag}\n#undef polytune_wmma_step_{tag}\n#undef polytune_wmma_store_{tag}\n"
    );
    let layout = |row: bool| if row { "nvcuda::wmma::row_major" } else { "nvcuda::wmma::col_major" };
    let w = "nvcuda::wmma";
    let device = format!(
        "static __device__ __forceinline__ void polytune_wmma_zero_{tag}({ACC_TYPE} *acc)\n{{\n\
         #pragma unroll\n  for (int f = 0; f < {frags}; f++)\n    {w}::fill_fragment(acc[f], 0.0);\n}}\n\n\
         static __device__ __forceinline__ void polytune_wmma_step_{tag}({ACC_TYPE} *acc, const double *a, \
         const double *b, int lane)\n{{\n  \
         {w}::fragment<{w}::matrix_a, 8, 8, 4, double, {la}> fa[{fm}];\n  \
         {w}::fragment<{w}::matrix_b, 8, 8, 4, double, {lb}> fb;\n  (void) lane;\n\
         #pragma unroll\n  for (int m = 0; m < {fm}; m++)\n    \
         {w}::load_matrix_sync(fa[m], a + 8 * m * {am}, {lda});\n\
         #pragma unroll\n  for (int n = 0; n < {fn_}; n++) {{\n    \
         {w}::load_matrix_sync(fb, b + 8 * n * {bn}, {ldb});\n\
         #pragma unroll\n    for (int m = 0; m < {fm}; m++)\n      \
         {w}::mma_sync(acc[m * {fn_} + n], fa[m], fb, acc[m * {fn_} + n]);\n  }}\n}}\n\n\
         static __device__ __forceinline__ void polytune_wmma_store_{tag}(const {ACC_TYPE} *acc, double *out, \
         int lane)\n{{\n  (void) lane;\n\
         #pragma unroll\n  for (int m = 0; m < {fm}; m++)\n\
         #pragma unroll\n    for (int n = 0; n < {fn_}; n++)\n      \
         {w}::store_matrix_sync(out + 8 * m * {ldo} + 8 * n, acc[m * {fn_} + n], {ldo}, {w}::mem_row_major);\n}}\n\n",
        frags = fm * fn_,
        la = layout(am != 1),
        lb = layout(bn == 1),
    );
    Helpers { emulated, undef, device }
}
