//! The isl functions isl-rs 0.3.1 does not bind (the AST build's iterators,
//! its mark callback and expressions of a build, two options, the last
//! error's message), declared against the same library, each behind a safe
//! function: pointers stay in this module, every one isl may return null
//! is checked, and every object is handed to isl or freed here.

use std::ffi::{CStr, CString};

use isl_rs::{ASTExpr, ASTNode, ASTNodeType, Context, IdList, PwAff, Schedule, Set};
use libc::{c_char, c_int, c_void, uintptr_t};

use super::IslError;

unsafe extern "C" {
    fn isl_options_set_on_error(ctx: uintptr_t, val: c_int) -> c_int;
    fn isl_options_set_ast_build_allow_else(ctx: uintptr_t, val: c_int) -> c_int;
    fn isl_ctx_last_error_msg(ctx: uintptr_t) -> *const c_char;
    fn isl_ast_build_from_context(set: uintptr_t) -> uintptr_t;
    fn isl_ast_build_node_from_schedule(build: uintptr_t, schedule: uintptr_t) -> uintptr_t;
    fn isl_ast_build_free(build: uintptr_t) -> uintptr_t;
    fn isl_ast_build_set_iterators(build: uintptr_t, iterators: uintptr_t) -> uintptr_t;
    fn isl_ast_build_expr_from_pw_aff(build: uintptr_t, pa: uintptr_t) -> uintptr_t;
    fn isl_ast_build_expr_from_set(build: uintptr_t, set: uintptr_t) -> uintptr_t;
    fn isl_ast_build_set_after_each_mark(
        build: uintptr_t,
        f: extern "C" fn(uintptr_t, uintptr_t, *mut c_void) -> uintptr_t,
        user: *mut c_void,
    ) -> uintptr_t;
    fn isl_ast_build_get_ctx(build: uintptr_t) -> uintptr_t;
    fn isl_ast_build_get_schedule(build: uintptr_t) -> uintptr_t;
    fn isl_ast_node_get_type(node: uintptr_t) -> c_int;
    fn isl_ast_node_mark_get_id(node: uintptr_t) -> uintptr_t;
    fn isl_ast_node_mark_get_node(node: uintptr_t) -> uintptr_t;
    fn isl_ast_node_alloc_mark(id: uintptr_t, node: uintptr_t) -> uintptr_t;
    fn isl_ast_node_free(node: uintptr_t) -> uintptr_t;
    fn isl_ast_expr_to_C_str(expr: uintptr_t) -> *mut c_char;
    fn isl_ast_expr_free(expr: uintptr_t) -> uintptr_t;
    fn isl_id_get_name(id: uintptr_t) -> *const c_char;
    fn isl_id_alloc(ctx: uintptr_t, name: *const c_char, user: *mut c_void) -> uintptr_t;
    fn isl_id_free(id: uintptr_t) -> uintptr_t;
    fn isl_union_map_read_from_str(ctx: uintptr_t, text: *const c_char) -> uintptr_t;
    fn isl_union_map_reverse(umap: uintptr_t) -> uintptr_t;
    fn isl_union_map_apply_range(umap1: uintptr_t, umap2: uintptr_t) -> uintptr_t;
    fn isl_union_map_domain(umap: uintptr_t) -> uintptr_t;
    fn isl_map_from_union_map(umap: uintptr_t) -> uintptr_t;
    fn isl_pw_multi_aff_from_map(map: uintptr_t) -> uintptr_t;
    fn isl_pw_multi_aff_get_pw_aff(pma: uintptr_t, pos: c_int) -> uintptr_t;
    fn isl_pw_multi_aff_dim(pma: uintptr_t, kind: c_int) -> c_int;
    fn isl_pw_multi_aff_free(pma: uintptr_t) -> uintptr_t;
    fn isl_union_set_to_str(uset: uintptr_t) -> *mut c_char;
    fn isl_union_set_free(uset: uintptr_t) -> uintptr_t;
}

/// isl's `isl_dim_out` (the values of a function).
const ISL_DIM_OUT: c_int = 3;

/// ISL_ON_ERROR_CONTINUE on `ctx`: errors come back as results instead of
/// warnings on stderr.
pub(super) fn continue_on_error(ctx: &Context) {
    // SAFETY: `ctx` is a live context; setting an option only writes it.
    unsafe { isl_options_set_on_error(ctx.ptr, 1) };
}

/// isl's last error message, or a stand-in where isl left none: isl-rs's
/// `Context::last_error_msg` reads the null pointer isl returns then (a
/// segmentation fault, random program 1175 of the oracle).
pub fn last_error(ctx: &Context) -> String {
    // SAFETY: `ctx` is a live context; the message is isl's, read here and not kept.
    let msg = unsafe { isl_ctx_last_error_msg(ctx.ptr) };
    if msg.is_null() {
        return "isl gave no message".to_string();
    }
    // SAFETY: not null, so a NUL-terminated string isl owns for as long as `ctx`.
    unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
}

/// isl's last error on `ctx` as isl-rs spells its errors (`[Quota] …`:
/// the kind, then the message), and reset, as isl-rs resets it.
fn error(ctx: &Context, what: impl Into<String>) -> IslError {
    let message = format!("[{:?}] {}", ctx.last_error(), last_error(ctx));
    ctx.reset_error();
    IslError { what: what.into(), message }
}

/// Whether isl's AST generator may join code under disjoint guards into
/// `if … else …` on `ctx` (its default).
pub fn set_ast_build_allow_else(ctx: &Context, allow: bool) {
    // SAFETY: `ctx` is a live context; setting an option only writes it.
    unsafe { isl_options_set_ast_build_allow_else(ctx.ptr, c_int::from(allow)) };
}

/// The type of an AST node: isl-rs 0.3.1 maps `isl_ast_node_type` off by
/// one (isl numbers `for` as 1).
pub fn ast_node_type(node: &ASTNode) -> ASTNodeType {
    // SAFETY: `node` is a live node isl-rs owns; reading its type changes nothing.
    match unsafe { isl_ast_node_get_type(node.ptr) } {
        1 => ASTNodeType::For,
        2 => ASTNodeType::If,
        3 => ASTNodeType::Block,
        4 => ASTNodeType::Mark,
        5 => ASTNodeType::User,
        _ => ASTNodeType::Error,
    }
}

/// Text isl made (`malloc`ed), freed; empty for null.
///
/// # Safety
/// `c` is null or a string isl allocated and nobody else frees.
unsafe fn take_c_string(c: *mut c_char) -> String {
    if c.is_null() {
        return String::new();
    }
    // SAFETY: not null, so a NUL-terminated string, ours to free (the caller's contract).
    let s = unsafe { CStr::from_ptr(c) }.to_string_lossy().into_owned();
    // SAFETY: isl allocated it with malloc and gave it to us.
    unsafe { libc::free(c as *mut c_void) };
    s
}

/// Which isl AST expression to build from an object under a context.
#[derive(Clone, Copy)]
enum Expr {
    PwAff,
    Set,
}

/// `pa`, a function of the parameters of `context`, as a C expression
/// (isl's `floord`, `min` and `max` macros, as in generated loops).
pub fn pw_aff_to_c(ctx: &Context, context: Set, pa: PwAff) -> Result<String, IslError> {
    let mut pa = pa;
    pa.do_not_free_on_drop();
    c_in_context(ctx, context, "a bound", pa.ptr, Expr::PwAff)
}

/// `set`, parameters only, as a C condition that holds within `context`
/// exactly where `set` does.
pub fn set_to_c(ctx: &Context, context: Set, set: Set) -> Result<String, IslError> {
    let mut set = set;
    set.do_not_free_on_drop();
    c_in_context(ctx, context, "a condition", set.ptr, Expr::Set)
}

/// The isl AST expression `kind` builds from `arg` (given up by its owner:
/// taken here) on a build over `context`, as C.
fn c_in_context(
    ctx: &Context,
    context: Set,
    what: &str,
    arg: uintptr_t,
    kind: Expr,
) -> Result<String, IslError> {
    let mut context = context;
    context.do_not_free_on_drop();
    // SAFETY: `context` and `arg` are live objects whose owners gave them up
    // (`do_not_free_on_drop`); the build takes the context (`__isl_take`) and
    // the expression call takes `arg`; where no build is made, `arg` is freed
    // by the owned value dropped here; the build is freed after.
    let expr = unsafe {
        let build = isl_ast_build_from_context(context.ptr);
        if build == 0 {
            match kind {
                Expr::PwAff => drop(PwAff { ptr: arg, should_free_on_drop: true }),
                Expr::Set => drop(Set { ptr: arg, should_free_on_drop: true }),
            }
            0
        } else {
            let e = match kind {
                Expr::PwAff => isl_ast_build_expr_from_pw_aff(build, arg),
                Expr::Set => isl_ast_build_expr_from_set(build, arg),
            };
            isl_ast_build_free(build);
            e
        }
    };
    if expr == 0 {
        return Err(error(ctx, format!("printing {what}")));
    }
    let expr = ASTExpr { ptr: expr, should_free_on_drop: true };
    let text =
        expr.to_C_str().map_err(|e| IslError { what: format!("printing {what}"), message: e.to_string() })?;
    Ok(text.to_string())
}

/// Where the AST generator stands at a mark it has just generated: what
/// [`ast_from_schedule`]'s `on_mark` may ask of it.
pub struct MarkSite {
    build: uintptr_t,
}

impl MarkSite {
    /// The statement instances the generator put under the mark (isl text).
    pub fn instances(&self) -> String {
        // SAFETY: `build` is the live build isl passed to the callback; the
        // schedule and its domain are new objects, printed and freed here.
        unsafe {
            let schedule = isl_ast_build_get_schedule(self.build);
            if schedule == 0 {
                return String::new();
            }
            let reached = isl_union_map_domain(schedule);
            if reached == 0 {
                return String::new();
            }
            let text = take_c_string(isl_union_set_to_str(reached));
            isl_union_set_free(reached);
            text
        }
    }

    /// The values, as C expressions in the AST's iterators, of the function
    /// `prefix` (isl text of a union map from the instances under the mark)
    /// here; none where isl cannot say.
    pub fn values(&self, prefix: &CStr) -> Vec<String> {
        // SAFETY: `build` is the live build isl passed to the callback; each
        // object made here is taken by the next call (`__isl_take`) or freed,
        // and a null result ends the chain (isl's calls take null and return it).
        unsafe {
            let ctx = isl_ast_build_get_ctx(self.build);
            // Iterators -> instances executed here -> the prefix's values.
            let executed = isl_union_map_reverse(isl_ast_build_get_schedule(self.build));
            let values =
                isl_union_map_apply_range(executed, isl_union_map_read_from_str(ctx, prefix.as_ptr()));
            let pma = isl_pw_multi_aff_from_map(isl_map_from_union_map(values));
            if pma == 0 {
                return Vec::new();
            }
            let n = isl_pw_multi_aff_dim(pma, ISL_DIM_OUT).max(0);
            let mut out = Vec::new();
            for d in 0..n {
                let expr = isl_ast_build_expr_from_pw_aff(self.build, isl_pw_multi_aff_get_pw_aff(pma, d));
                out.push(if expr == 0 { String::new() } else { take_c_string(isl_ast_expr_to_C_str(expr)) });
                isl_ast_expr_free(expr);
            }
            isl_pw_multi_aff_free(pma);
            out
        }
    }
}

/// What [`ast_from_schedule`] calls at each mark: the mark's name and where
/// it stands; a new name for the mark, or `None` to keep it.
pub type OnMark<'a> = dyn FnMut(&str, &MarkSite) -> Option<String> + 'a;

/// The callback's state: the caller's function, and a panic it raised
/// (carried past isl's C frames and resumed once isl returns).
struct MarkState<'a, 'b> {
    on_mark: &'a mut OnMark<'b>,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

extern "C" fn after_mark(node: uintptr_t, build: uintptr_t, user: *mut c_void) -> uintptr_t {
    // SAFETY: `user` is the `MarkState` `ast_from_schedule` passed, alive and
    // borrowed by nobody else while isl generates; isl hands us the mark node
    // (`__isl_take`) and expects a node back.
    let state = unsafe { &mut *(user as *mut MarkState) };
    if state.panic.is_some() {
        return node;
    }
    // SAFETY: `node` is a live mark node; its id is a new reference, freed
    // here; its name may be null, which is checked.
    let name = unsafe {
        let id = isl_ast_node_mark_get_id(node);
        let name = isl_id_get_name(id);
        let text =
            if name.is_null() { String::new() } else { CStr::from_ptr(name).to_string_lossy().into_owned() };
        isl_id_free(id);
        text
    };
    let site = MarkSite { build };
    let renamed =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (state.on_mark)(&name, &site))) {
            Ok(r) => r,
            Err(panic) => {
                state.panic = Some(panic);
                None
            }
        };
    let Some(Ok(renamed)) = renamed.map(CString::new) else { return node };
    // SAFETY: the new id takes a copy of the name; the mark's child is a new
    // reference given to the new mark, and the old mark is freed: isl gets
    // one node back, as it gave one.
    unsafe {
        let id = isl_id_alloc(isl_ast_build_get_ctx(build), renamed.as_ptr(), std::ptr::null_mut());
        let under = isl_ast_node_mark_get_node(node);
        isl_ast_node_free(node);
        isl_ast_node_alloc_mark(id, under)
    }
}

/// isl's AST for `schedule` under `context`, its loops' iterators named by
/// `iterators` (outermost first), `on_mark` called at each mark once its
/// subtree is generated.
pub fn ast_from_schedule(
    ctx: &Context,
    context: Set,
    iterators: IdList,
    schedule: Schedule,
    on_mark: Option<&mut OnMark>,
) -> Result<ASTNode, IslError> {
    let (mut context, mut iterators, mut schedule) = (context, iterators, schedule);
    context.do_not_free_on_drop();
    iterators.do_not_free_on_drop();
    schedule.do_not_free_on_drop();
    let mut state = on_mark.map(|on_mark| MarkState { on_mark, panic: None });
    // SAFETY: the three objects were given up by their owners; the build
    // takes the context, then the iterators, and the node call takes the
    // schedule (each `__isl_take`; where no build is made the schedule is
    // freed here). `state` outlives the build, which is freed before return.
    let node = unsafe {
        let mut build = isl_ast_build_set_iterators(isl_ast_build_from_context(context.ptr), iterators.ptr);
        if let (Some(state), true) = (state.as_mut(), build != 0) {
            build =
                isl_ast_build_set_after_each_mark(build, after_mark, state as *mut MarkState as *mut c_void);
        }
        if build == 0 {
            drop(Schedule { ptr: schedule.ptr, should_free_on_drop: true });
            return Err(error(ctx, "creating an AST build"));
        }
        let node = isl_ast_build_node_from_schedule(build, schedule.ptr);
        isl_ast_build_free(build);
        node
    };
    let node = (node != 0).then_some(ASTNode { ptr: node, should_free_on_drop: true });
    if let Some(panic) = state.and_then(|s| s.panic) {
        std::panic::resume_unwind(panic);
    }
    node.ok_or_else(|| error(ctx, "generating the AST"))
}
