//! isl's AST printed as C, and the statement macros it calls.

use super::ast::node_type;
use super::ast::MAX_LOOP_DEPTH;
use super::marks::{ACCUMULATE_MARK, BARRIER, KERNEL_MARK, PARALLEL_MARK, SIMD_MARK, UNROLL_MARK};
use super::outline::Outliner;
use super::CodegenError;
use isl_rs::{ASTExprOpType, ASTNode, ASTNodeType};
use model::isl::IslResultExt;
use model::scop::text::word_end;
use model::scop::Scop;
use vocab::knobs::OmpSchedule;

/// How a GPU thread index's name starts (`polytune_t0`).
const THREAD: &str = "polytune_t";

/// A kernel's launch from the outer schedule dimensions' values at its mark.
pub(super) type Launch = Box<dyn Fn(&[String]) -> Result<String, CodegenError>>;

/// Prints isl's AST as C: `for` loops with block-scoped iterators (so OpenMP
/// makes them private), `#pragma omp parallel for` on the loops of the marked
/// dimension under our mark, and calls of the statement macros.
pub(super) struct Printer {
    pub(super) out: String,
    pub(super) indent: usize,
    /// Put before the statement name of each call (`polytune_S1(...)`).
    pub(super) call_prefix: &'static str,
    /// The iterator prefix given to isl: schedule dimension d is `{prefix}{d}`.
    pub(super) iterators: String,
    /// The arguments of each statement's macro: a call's further arguments
    /// are the tile iterators of a lifted domain (`Walk::tile_lifted`),
    /// dropped.
    pub(super) arity: std::collections::HashMap<String, usize>,
    /// Iterators of the dimensions named by the `SIMD_MARK`s around the
    /// node being printed: their loops get `omp simd`.
    pub(super) simd: Vec<String>,
    /// Iterators of register tiling's strips around the node being
    /// printed (`UNROLL_MARK`), with their unroll factor.
    pub(super) unroll: Vec<(String, u32)>,
    /// Unroll only strips of a constant trip count: with full tiles
    /// isolated, the register tile is the full tiles' code, and unrolling
    /// the partial tiles' strips (`c <= min(3, n - ...)`) only tripled
    /// gcc's time (2mm: 5.9 s against 2.1 s) for a sliver of the work.
    pub(super) unroll_constant_only: bool,
    /// In a CUDA kernel's code (`gpu_unroll=on`): loops from a constant to a
    /// constant of at most this many iterations get `#pragma unroll`, so
    /// that nvcc unrolls them whole and a stage's shared-memory reads take
    /// constant offsets (by itself nvcc unrolls gemm's 16-step `k` loop of
    /// a full tile by 2). 0: never.
    pub(super) unroll_whole: u32,
    /// The clause of every `parallel for`.
    pub(super) omp_schedule: OmpSchedule,
    /// Fewer iterations than this run a parallel loop on one thread (0: never).
    pub(super) parallel_min: u32,
    /// With `restrict=on`: the body of each parallel loop (not itself
    /// `simd`) becomes a function of its own (`outline`).
    pub(super) outliner: Option<Outliner>,
    /// With the outliner, register tiles, and no parallel loop: the body of
    /// each outermost loop becomes a function instead, as it would under
    /// `omp parallel for`. gcc kept gemm's register tiles in registers
    /// there but spilled part of them with the tile loop in the same
    /// function (one core, LARGE: 74.0 against 66.8 ms); without register
    /// tiles it changed the stencils and covariance by -3% to +4%.
    pub(super) outline_outermost: bool,
    /// Iterators of the loops around the node being printed.
    pub(super) loops: Vec<String>,
    /// The declarations of the block each `ACCUMULATE_MARK` numbered `K`
    /// opens (`accumulate`), by `K`.
    pub(super) locals: Vec<String>,
    /// In host code of a GPU variant, each kernel's launch, given the
    /// values of the outer schedule dimensions at its `KERNEL_MARK` and
    /// printed instead of the subtree; empty elsewhere (and in a kernel's
    /// own code, where the mark is passed through).
    pub(super) launches: Vec<Launch>,
    /// Conditions of an emulated kernel that the threads evaluated and
    /// agreed on so far (`Printer::agreed`), for fresh names.
    pub(super) agreed: usize,
}

impl Printer {
    /// A printer of plain loops (no OpenMP, no outlining, no launches) at
    /// `indent`, calling `call_prefix` macros with `arity` arguments.
    pub(super) fn plain(
        indent: usize,
        call_prefix: &'static str,
        iterators: &str,
        arity: std::collections::HashMap<String, usize>,
    ) -> Printer {
        Printer {
            out: String::new(),
            indent,
            call_prefix,
            iterators: iterators.to_string(),
            arity,
            simd: Vec::new(),
            unroll: Vec::new(),
            unroll_constant_only: false,
            unroll_whole: 0,
            omp_schedule: OmpSchedule::default(),
            parallel_min: 0,
            outliner: None,
            outline_outermost: false,
            loops: Vec::new(),
            locals: Vec::new(),
            launches: Vec::new(),
            agreed: 0,
        }
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// ` if(...)`: the loop `node` (from `init` by `inc`) has at least
    /// `parallel_min` iterations; empty when there is no minimum or isl's
    /// condition is not `iterator <= bound` or `iterator < bound`.
    fn min_trip_clause(&self, node: &ASTNode, init: &str, inc: &str) -> Result<String, CodegenError> {
        let what = || "the trip count of a parallel loop".to_string();
        if self.parallel_min < 2 {
            return Ok(String::new());
        }
        let cond = node.for_get_cond().ctx(what)?;
        if cond.get_type().ctx(what)? != isl_rs::ASTExprType::Op || cond.get_op_n_arg().ctx(what)? != 2 {
            return Ok(String::new());
        }
        let op = match cond.get_op_type().ctx(what)? {
            ASTExprOpType::Le => ">=",
            ASTExprOpType::Lt => ">",
            _ => return Ok(String::new()),
        };
        let it = node.for_get_iterator().ctx(what)?.to_C_str().ctx(what)?.to_string();
        if cond.get_op_arg(0).ctx(what)?.to_C_str().ctx(what)? != it {
            return Ok(String::new());
        }
        let bound = cond.get_op_arg(1).ctx(what)?.to_C_str().ctx(what)?.to_string();
        // n iterations from init by inc reach at least init + (n - 1) * inc.
        let reach = (self.parallel_min as i64 - 1) * inc.parse::<i64>().unwrap_or(1);
        Ok(format!(" if(({bound}) - ({init}) {op} {reach})"))
    }

    /// `parallel`: under a parallel mark, the iterator of the marked
    /// dimension; its loops (not nested in another loop below the mark) get
    /// `parallel for`, every other loop stays sequential.
    pub(super) fn node(&mut self, node: &ASTNode, parallel: Option<&str>) -> Result<(), CodegenError> {
        let what = || "printing the AST".to_string();
        match node_type(node) {
            ASTNodeType::For => self.for_loop(node, parallel)?,
            ASTNodeType::If => {
                let cond = node.if_get_cond().ctx(what)?.to_C_str().ctx(what)?.to_string();
                self.line(&format!("if ({cond}) {{"));
                self.indent += 1;
                self.node(&node.if_get_then_node().ctx(what)?, parallel)?;
                self.indent -= 1;
                if node.if_has_else_node().ctx(what)? {
                    self.line("} else {");
                    self.indent += 1;
                    self.node(&node.if_get_else_node().ctx(what)?, parallel)?;
                    self.indent -= 1;
                }
                self.line("}");
            }
            ASTNodeType::Block => {
                let list = node.block_get_children().ctx(what)?;
                // Sequential pieces: each loop of the marked dimension in
                // them is parallel on its own.
                for i in 0..list.size().ctx(what)? {
                    self.node(&list.get_at(i).ctx(what)?, parallel)?;
                }
            }
            ASTNodeType::Mark => self.mark(node, parallel)?,
            ASTNodeType::User => {
                let expr = node.user_get_expr().ctx(what)?;
                let n = expr.get_op_n_arg().ctx(what)?;
                let name = if n > 0 {
                    Some(expr.get_op_arg(0).ctx(what)?.to_C_str().ctx(what)?.to_string())
                } else {
                    None
                };
                let call = match name.as_ref().and_then(|name| self.arity.get(name).map(|&a| (name, a))) {
                    Some((name, arity)) if (n as usize) > arity + 1 => {
                        let args = (1..=arity as i32)
                            .map(|i| Ok(expr.get_op_arg(i).ctx(what)?.to_C_str().ctx(what)?.to_string()))
                            .collect::<Result<Vec<_>, CodegenError>>()?;
                        format!("{name}({})", args.join(", "))
                    }
                    _ => expr.to_C_str().ctx(what)?.to_string(),
                };
                self.line(&format!("{}{call};", self.call_prefix));
            }
            ASTNodeType::Error => {
                return Err(CodegenError::Unsupported("isl returned an error AST node".into()))
            }
        }
        Ok(())
    }

    /// A `for` node: a block for a degenerate loop, else the loop with its
    /// pragmas (unroll, `omp parallel for` when it is `parallel`'s, `omp
    /// simd`), its body outlined into a function where the outliner asks.
    fn for_loop(&mut self, node: &ASTNode, parallel: Option<&str>) -> Result<(), CodegenError> {
        let what = || "printing the AST".to_string();
        let it = node.for_get_iterator().ctx(what)?.to_C_str().ctx(what)?.to_string();
        let init = node.for_get_init().ctx(what)?.to_C_str().ctx(what)?.to_string();
        if node.for_is_degenerate().ctx(what)? {
            self.line("{");
            self.indent += 1;
            self.line(&format!("const int {it} = {init};"));
            self.loops.push(it);
            self.node(&node.for_get_body().ctx(what)?, None)?;
            self.loops.pop();
            self.indent -= 1;
            self.line("}");
            return Ok(());
        }
        let cond = node.for_get_cond().ctx(what)?.to_C_str().ctx(what)?.to_string();
        let inc = node.for_get_inc().ctx(what)?.to_C_str().ctx(what)?.to_string();
        if let Some((_, f)) = self.unroll.iter().find(|(u, _)| *u == it) {
            if !self.unroll_constant_only || constant_trip(node, &init)?.is_some() {
                self.line(&format!("#pragma GCC unroll {f}"));
            }
        } else if self.unroll_whole > 0 {
            let trip = constant_trip(node, &init)?.zip(inc.parse::<i64>().ok().filter(|&i| i > 0));
            if trip.is_some_and(|(span, inc)| span / inc < i64::from(self.unroll_whole)) {
                self.line("#pragma unroll");
            }
        }
        let simd = if self.simd.contains(&it) { " simd" } else { "" };
        let here = parallel == Some(it.as_str()) || self.outline_outermost && self.loops.is_empty();
        let outlined = here && simd.is_empty() && self.outliner.is_some();
        if parallel == Some(it.as_str()) {
            let schedule = match self.omp_schedule {
                OmpSchedule::Static => "",
                OmpSchedule::Dynamic => " schedule(dynamic)",
            };
            let min = self.min_trip_clause(node, &init, &inc)?;
            self.line(&format!("#pragma omp parallel for{simd}{schedule}{min}"));
        } else if !simd.is_empty() {
            self.line("#pragma omp simd");
        }
        let step = if inc == "1" { format!("{it}++") } else { format!("{it} += {inc}") };
        self.line(&format!("for (int {it} = {init}; {cond}; {step}) {{"));
        self.indent += 1;
        self.loops.push(it);
        let body = node.for_get_body().ctx(what)?;
        if outlined {
            let mut inner = Printer {
                out: String::new(),
                indent: 1,
                arity: self.arity.clone(),
                iterators: self.iterators.clone(),
                simd: self.simd.clone(),
                unroll: self.unroll.clone(),
                outliner: None,
                loops: self.loops.clone(),
                locals: self.locals.clone(),
                launches: Vec::new(),
                ..*self
            };
            inner.node(&body, None)?;
            let call = self.outliner.as_mut().map(|o| o.function(&self.loops, &inner.out));
            for l in call.unwrap_or_default().lines() {
                self.line(l);
            }
        } else {
            self.node(&body, None)?;
        }
        self.loops.pop();
        self.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A mark node: the unroll, simd and parallel marks of the transforms
    /// and a kernel's launch.
    fn mark(&mut self, node: &ASTNode, parallel: Option<&str>) -> Result<(), CodegenError> {
        let what = || "printing the AST".to_string();
        let id = node.mark_get_id().ctx(what)?.to_str().ctx(what)?.to_string();
        let under = node.mark_get_node().ctx(what)?;
        if let Some([d, m, f]) = mark_numbers(&id, UNROLL_MARK).as_deref() {
            let n = self.unroll.len();
            for k in (*d..d + m).filter(|&k| k < MAX_LOOP_DEPTH) {
                self.unroll.push((format!("{}{k}", self.iterators), *f as u32));
            }
            self.node(&under, parallel)?;
            self.unroll.truncate(n);
            return Ok(());
        }
        if let Some(Some(locals)) = mark_numbers(&id, ACCUMULATE_MARK).map(|k| self.locals.get(k[0]).cloned())
        {
            self.line("{");
            self.indent += 1;
            for l in locals.lines() {
                self.line(l);
            }
            self.node(&under, parallel)?;
            self.indent -= 1;
            self.line("}");
            return Ok(());
        }
        let depth = |prefix| match mark_numbers(&id, prefix).as_deref() {
            Some(&[d]) if d < MAX_LOOP_DEPTH => Some(format!("{}{d}", self.iterators)),
            _ => None,
        };
        if let Some(it) = depth(SIMD_MARK) {
            self.simd.push(it);
            self.node(&under, parallel)?;
            self.simd.pop();
            return Ok(());
        }
        // `polytune_kernel_3;c0;2 * c1 + 1`: kernel 3, the outer
        // schedule dimensions' values here (`ast::annotate_mark`).
        if let Some(rest) = id.strip_prefix(KERNEL_MARK).and_then(|r| r.strip_prefix('_')) {
            let mut parts = rest.split(';');
            let k = parts.next().and_then(|k| k.parse::<usize>().ok());
            let values: Vec<String> = parts.map(str::to_string).collect();
            if let Some(launch) = k.and_then(|k| self.launches.get(k)) {
                let text = launch(&values)?;
                for l in text.lines() {
                    self.line(l);
                }
                return Ok(());
            }
        }
        let marked = depth(PARALLEL_MARK);
        match marked {
            Some(it) if parallel.is_none() => self.node(&under, Some(&it))?,
            _ => self.node(&under, parallel)?,
        }
        Ok(())
    }
}

impl Printer {
    /// A kernel with barriers as its emulation runs it: between two
    /// barriers (a phase) every thread of the block runs its part, one
    /// thread after the other, in the order of `threads` (the loops over a
    /// block's threads, outermost first, each opening a brace); a barrier
    /// prints nothing. So a thread reads what the others wrote before the
    /// barrier and nothing they write after it, as on the GPU, and a
    /// missing barrier shows as wrong output. The loops and conditions
    /// around a barrier must be the same for every thread
    /// ([`Printer::agreed`]).
    pub(super) fn phased(&mut self, node: &ASTNode, threads: &[String]) -> Result<(), CodegenError> {
        let what = || "printing a kernel's phases".to_string();
        if !has_barrier(node)? {
            return self.in_threads(&[node], threads);
        }
        match node_type(node) {
            ASTNodeType::Block => {
                let list = node.block_get_children().ctx(what)?;
                let mut run = Vec::new();
                for i in 0..list.size().ctx(what)? {
                    let child = list.get_at(i).ctx(what)?;
                    if has_barrier(&child)? {
                        self.in_threads(&run.iter().collect::<Vec<_>>(), threads)?;
                        run.clear();
                        self.phased(&child, threads)?;
                    } else {
                        run.push(child);
                    }
                }
                self.in_threads(&run.iter().collect::<Vec<_>>(), threads)?;
            }
            ASTNodeType::For => {
                let it = node.for_get_iterator().ctx(what)?.to_C_str().ctx(what)?.to_string();
                let init = node.for_get_init().ctx(what)?.to_C_str().ctx(what)?.to_string();
                let init = self.agreed(&init, threads);
                if node.for_is_degenerate().ctx(what)? {
                    self.line("{");
                    self.indent += 1;
                    self.line(&format!("const int {it} = {init};"));
                } else {
                    let cond = node.for_get_cond().ctx(what)?.to_C_str().ctx(what)?.to_string();
                    let inc = node.for_get_inc().ctx(what)?.to_C_str().ctx(what)?.to_string();
                    if inc.contains(THREAD) {
                        return Err(CodegenError::Unsupported(format!(
                            "a barrier in a loop whose step `{inc}` depends on the thread"
                        )));
                    }
                    let step = if inc == "1" { format!("{it}++") } else { format!("{it} += {inc}") };
                    let by_thread = cond.contains(THREAD);
                    let test = if by_thread { String::new() } else { cond.clone() };
                    self.line(&format!("for (int {it} = {init}; {test}; {step}) {{"));
                    self.indent += 1;
                    self.loops.push(it.clone());
                    if by_thread {
                        let cond = self.agreed(&cond, threads);
                        self.line(&format!("if (!{cond}) break;"));
                    }
                    let body = node.for_get_body().ctx(what)?;
                    let segments = if by_thread { None } else { rotated(&body)? };
                    if let Some(segments) = segments {
                        self.rotated_body(&segments, threads, [&it, &init, &inc, &cond])?;
                    } else {
                        self.phased(&body, threads)?;
                    }
                    self.loops.pop();
                    self.indent -= 1;
                    self.line("}");
                    return Ok(());
                }
                self.loops.push(it);
                self.phased(&node.for_get_body().ctx(what)?, threads)?;
                self.loops.pop();
                self.indent -= 1;
                self.line("}");
            }
            ASTNodeType::If => {
                let cond = node.if_get_cond().ctx(what)?.to_C_str().ctx(what)?.to_string();
                let cond = self.agreed(&cond, threads);
                self.line(&format!("if ({cond}) {{"));
                self.indent += 1;
                self.phased(&node.if_get_then_node().ctx(what)?, threads)?;
                self.indent -= 1;
                if node.if_has_else_node().ctx(what)? {
                    self.line("} else {");
                    self.indent += 1;
                    self.phased(&node.if_get_else_node().ctx(what)?, threads)?;
                    self.indent -= 1;
                }
                self.line("}");
            }
            ASTNodeType::Mark => self.phased(&node.mark_get_node().ctx(what)?, threads)?,
            // The barrier itself: the phases around it are apart already.
            _ => {}
        }
        Ok(())
    }

    /// A loop body whose last phase runs on into the next iteration's
    /// first (no barrier at the end of the body, none at its start): each
    /// thread runs the two together, so that a barrier missing there shows.
    /// `segments`: the body cut at its barriers; `[it, init, inc, cond]`:
    /// the loop's.
    fn rotated_body(
        &mut self,
        segments: &[Vec<ASTNode>],
        threads: &[String],
        [it, init, inc, cond]: [&str; 4],
    ) -> Result<(), CodegenError> {
        let (first, last) = (&segments[0], &segments[segments.len() - 1]);
        self.line(&format!("if ({it} == {init}) {{"));
        self.indent += 1;
        self.in_threads(&first.iter().collect::<Vec<_>>(), threads)?;
        self.indent -= 1;
        self.line("}");
        for middle in &segments[1..segments.len() - 1] {
            self.in_threads(&middle.iter().collect::<Vec<_>>(), threads)?;
        }
        for t in threads {
            self.line(t);
            self.indent += 1;
        }
        for n in last {
            self.node(n, None)?;
        }
        // The next iteration's first phase, where there is one: the
        // iterator shadowed by its next value.
        self.line(&format!("const int polytune_next = {it} + {inc};"));
        self.line("{");
        self.indent += 1;
        self.line(&format!("const int {it} = polytune_next;"));
        self.line(&format!("if ({cond}) {{"));
        self.indent += 1;
        for n in first {
            self.node(n, None)?;
        }
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
        for _ in threads {
            self.indent -= 1;
            self.line("}");
        }
        Ok(())
    }

    /// `text`, a loop bound or condition around a barrier, as the block's
    /// threads see it: itself where it names no thread index; else a
    /// variable every thread computes it into, which must come out the same
    /// for all of them. isl words some conditions that are the same for
    /// every thread with their indices (random program 499:
    /// `3 * ((t0 + m) / 2) + 2 >= 2 * o0 + 2 * b0 + 2 * t0` holds for both
    /// threads wherever the code reaches it, since the barrier under it
    /// runs for the block as a whole); where the threads disagreed, the
    /// barrier would be divergent (undefined on the GPU), and the emulation
    /// stops there (`__builtin_trap`) rather than go on.
    fn agreed(&mut self, text: &str, threads: &[String]) -> String {
        if !text.contains(THREAD) {
            return text.to_string();
        }
        let v = format!("polytune_agreed{}", self.agreed);
        self.agreed += 1;
        self.line(&format!("long {v} = 0, {v}_by = 0;"));
        for t in threads {
            self.line(t);
            self.indent += 1;
        }
        self.line(&format!("const long polytune_value = {text};"));
        self.line(&format!("if ({v}_by && {v} != polytune_value)"));
        self.line("  __builtin_trap();");
        self.line(&format!("{v} = polytune_value, {v}_by = 1;"));
        for _ in threads {
            self.indent -= 1;
            self.line("}");
        }
        v
    }

    /// `nodes`, in order, inside the loops over the block's threads.
    fn in_threads(&mut self, nodes: &[&ASTNode], threads: &[String]) -> Result<(), CodegenError> {
        if nodes.is_empty() {
            return Ok(());
        }
        for t in threads {
            self.line(t);
            self.indent += 1;
        }
        for n in nodes {
            self.node(n, None)?;
        }
        for _ in threads {
            self.indent -= 1;
            self.line("}");
        }
        Ok(())
    }
}

/// A loop body cut at its barriers, where its first and last phases are
/// one across iterations: barriers only among its own statements (none in
/// a nested loop), none first, none last.
fn rotated(body: &ASTNode) -> Result<Option<Vec<Vec<ASTNode>>>, CodegenError> {
    let what = || "cutting a loop body at its barriers".to_string();
    let items = match node_type(body) {
        ASTNodeType::Block => {
            let list = body.block_get_children().ctx(what)?;
            (0..list.size().ctx(what)?).map(|i| list.get_at(i).ctx(what)).collect::<Result<Vec<_>, _>>()?
        }
        _ => return Ok(None),
    };
    let mut segments = vec![Vec::new()];
    for item in items {
        if is_barrier(&item)? {
            segments.push(Vec::new());
        } else if has_barrier(&item)? {
            return Ok(None);
        } else {
            segments.last_mut().expect("a segment").push(item);
        }
    }
    let open = segments.len() > 1 && !segments[0].is_empty() && !segments[segments.len() - 1].is_empty();
    Ok(open.then_some(segments))
}

fn is_barrier(node: &ASTNode) -> Result<bool, CodegenError> {
    Ok(node_type(node) == ASTNodeType::User && has_barrier(node)?)
}

/// Whether a barrier statement ([`BARRIER`]) is in the AST at `node`.
fn has_barrier(node: &ASTNode) -> Result<bool, CodegenError> {
    let what = || "looking for barriers".to_string();
    Ok(match node_type(node) {
        ASTNodeType::User => {
            let expr = node.user_get_expr().ctx(what)?;
            expr.get_op_n_arg().ctx(what)? > 0
                && expr.get_op_arg(0).ctx(what)?.to_C_str().ctx(what)?.starts_with(BARRIER)
        }
        ASTNodeType::For => has_barrier(&node.for_get_body().ctx(what)?)?,
        ASTNodeType::If => {
            has_barrier(&node.if_get_then_node().ctx(what)?)?
                || (node.if_has_else_node().ctx(what)? && has_barrier(&node.if_get_else_node().ctx(what)?)?)
        }
        ASTNodeType::Block => {
            let list = node.block_get_children().ctx(what)?;
            let mut any = false;
            for i in 0..list.size().ctx(what)? {
                any |= has_barrier(&list.get_at(i).ctx(what)?)?;
            }
            any
        }
        ASTNodeType::Mark => has_barrier(&node.mark_get_node().ctx(what)?)?,
        _ => false,
    })
}

/// Where the loop `node`, starting at `init`, runs from a constant to a
/// constant (`c <= 3`, not `c <= min(3, n - c0 - 1)`): its last value minus
/// its first.
fn constant_trip(node: &ASTNode, init: &str) -> Result<Option<i64>, CodegenError> {
    let what = || "the trip count of an unrolled loop".to_string();
    let Ok(first) = init.parse::<i64>() else {
        return Ok(None);
    };
    let cond = node.for_get_cond().ctx(what)?;
    if cond.get_op_n_arg().ctx(what)? != 2 {
        return Ok(None);
    }
    let bound = cond.get_op_arg(1).ctx(what)?.to_C_str().ctx(what)?.to_string();
    let Ok(bound) = bound.parse::<i64>() else {
        return Ok(None);
    };
    let last = match cond.get_op_type().ctx(what)? {
        ASTExprOpType::Le => bound,
        ASTExprOpType::Lt => bound - 1,
        _ => return Ok(None),
    };
    Ok(Some(last - first))
}

/// The numbers after `prefix` in a mark's name (`polytune_unroll_6_2_4`
/// → 6, 2, 4); `None` for another mark or a malformed one.
fn mark_numbers(id: &str, prefix: &str) -> Option<Vec<usize>> {
    id.strip_prefix(prefix)?.strip_prefix('_')?.split('_').map(|x| x.parse().ok()).collect()
}

/// Statement macros are `polytune_S1(...)`, so they cannot collide with a
/// user's identifier `S1`.
pub(super) const MACRO_PREFIX: &str = "polytune_";

/// Dump loops call `polytune_W_A(...)` for each written element of `A`.
pub(super) const DUMP_PREFIX: &str = "polytune_W_";

/// isl's C printer uses these; they exist only inside the generated region.
pub(super) const AST_MACROS: &str = "#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define ceild(n, d) (((n) < 0) ? -((-(n)) / (d)) : ((n) + (d) - 1) / (d))
#define min(x, y) ((x) < (y) ? (x) : (y))
#define max(x, y) ((x) > (y) ? (x) : (y))
";

/// `body` with the SCoP's arrays used through `restrict`-qualified
/// pointers: each array `A` of rank ≥ 1 named by a plain identifier is
/// copied into `polytune_restrict_A`, then redeclared in an inner block as
/// a restricted pointer of the same type, so the statements' text is
/// unchanged. GNU spellings (`__typeof__`, `__restrict__`) work in every
/// C mode of gcc and clang.
pub(super) fn restrict_pointers(scop: &Scop, body: &str) -> String {
    let arrays: Vec<&str> = scop
        .arrays
        .iter()
        .filter(|a| a.rank() > 0 && !a.local)
        .map(|a| a.name.as_str())
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    if arrays.is_empty() {
        return body.to_string();
    }
    let mut out = String::from("  {\n");
    for a in &arrays {
        out.push_str(&format!("  __typeof__(&{a}[0]) polytune_restrict_{a} = {a};\n"));
    }
    out.push_str("  {\n");
    for a in &arrays {
        out.push_str(&format!(
            "  __typeof__(polytune_restrict_{a}) __restrict__ {a} = polytune_restrict_{a};\n"
        ));
    }
    out.push_str(body);
    out.push_str("  }\n  }\n");
    out
}

/// `#define polytune_S1(i, j) C[(i)][(j)] *= beta` for every statement.
pub(super) fn statement_macros(scop: &Scop) -> String {
    let mut out = String::from(AST_MACROS);
    for s in &scop.statements {
        let body = statement_body(s);
        out.push_str(&format!("#define {MACRO_PREFIX}{}({}) {body}\n", s.name, s.c_iterators.join(", ")));
    }
    out
}

/// A statement's macro body: its text on one line, without its `;`, each
/// iterator parenthesized.
pub(super) fn statement_body(s: &model::scop::Statement) -> String {
    let body = s.text.trim().trim_end_matches(';').replace(['\n', '\r'], " ");
    parenthesize(&body, &s.c_iterators)
}

pub(super) const UNDEF_AST_MACROS: &str = "#undef floord\n#undef ceild\n#undef min\n#undef max\n";

pub(super) fn undef_macros(scop: &Scop) -> String {
    let mut out = String::from(UNDEF_AST_MACROS);
    for s in &scop.statements {
        out.push_str(&format!("#undef {MACRO_PREFIX}{}\n", s.name));
    }
    out
}

/// Wraps every use of an iterator in parentheses, so that a macro argument
/// such as `c0 + 1` keeps its meaning inside `A[2 * i]`.
pub(super) fn parenthesize(body: &str, iterators: &[String]) -> String {
    let mut out = String::with_capacity(body.len() + 16);
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' || c.is_ascii_digit() {
            let start = i;
            i = word_end(bytes, i);
            let word = &body[start..i];
            if !c.is_ascii_digit() && iterators.iter().any(|it| it == word) {
                out.push('(');
                out.push_str(word);
                out.push(')');
            } else {
                out.push_str(word);
            }
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterators_are_parenthesized_but_numbers_and_other_names_are_not() {
        let its = vec!["i".to_string(), "j".to_string()];
        assert_eq!(
            parenthesize("A[2*i][j+1] = xi * 1e5 + i2 + j", &its),
            "A[2*(i)][(j)+1] = xi * 1e5 + i2 + (j)"
        );
        assert_eq!(parenthesize("B[i] = 0x1f + 2.0f", &its), "B[(i)] = 0x1f + 2.0f");
    }
}
