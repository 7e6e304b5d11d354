//! A GPU variant from its mapped tree: each kernel's code for the GPU and
//! as its emulation on the CPU runs it, the host code that launches them,
//! the emulated program (what CI verifies without a GPU) and, where the
//! region can be a function of its arrays, the CUDA form.

use super::cuda::{self, Cuda};
use super::{map, split_launches, Kernel, Mapping, Shape};
use crate::ast::{build_annotated_ast, build_ast_without_else, every_statement_runs, iterator_prefix};
use crate::print::{self, statement_macros, undef_macros, Printer, MACRO_PREFIX};
use crate::splice::{plain_block, splice};
use crate::{arities, guarded, outline, write_back, CodegenError, CodegenOptions, Exported, Variant};
use isl_rs::{ASTNode, Context, Schedule, UnionSet};
use model::deps::Dependences;
use model::isl::IslResultExt;
use model::scop::{Scop, Source};

/// The most iterations of a constant loop in a kernel that `gpu_unroll=on`
/// unrolls whole: gemm's stage of 16 `k` steps at 8 × 8 points a thread is
/// 1,024 multiply-adds. Off by default: on an H200 (2026-11-27) it made
/// gemm's kernels 0-8% slower at 7 of 8 tile shapes and thread tiles.
const UNROLL_WHOLE: u32 = 32;

/// A GPU variant (`gpu`): the program with each kernel's launch emulated
/// on the CPU (loops over its blocks and threads around the kernel's code
/// for one thread), and, where the region can be a function, its CUDA form
/// with the same kernel code.
pub(crate) fn generate_gpu(
    ctx: &Context,
    source: &Source,
    scop: &Scop,
    deps: Option<&Dependences>,
    tree: Schedule,
    opts: &CodegenOptions,
) -> Result<Variant, CodegenError> {
    if !scop.copies.is_empty() {
        return Err(CodegenError::Unsupported("transposed copies are made for CPU variants only".into()));
    }
    let sizes = opts.tile_sizes.clone().unwrap_or_else(|| vec![32]);
    // Mapped and generated where every statement runs, as CPU code is.
    let (runs, guard) = every_statement_runs(ctx, scop)?;
    let mapping = Mapping {
        sizes: &sizes,
        block: opts.code.gpu_block,
        checks: deps,
        promote: (!opts.code.gpu_global).then_some(scop),
        points: i64::from(opts.code.gpu_thread_tile),
        drop_barrier: opts.drop_barrier,
        unpromoted: Vec::new(),
        mma: opts.code.gpu_mma,
    };
    let prefix = iterator_prefix(scop);
    let launched = |mapping: &Mapping| -> Result<Launched, CodegenError> {
        let (host, kernels) = map(ctx, &runs, tree.copy().ctx(|| "schedule".into())?, mapping)?;
        let schedule = host.to_str().ctx(|| "printing the schedule".into())?.to_string();
        let prefixes: Vec<String> = kernels.iter().map(|k| k.prefix.clone()).collect();
        let (ast, occurrences) = build_annotated_ast(ctx, &runs, host, &prefix, &prefixes)?;
        Ok(Launched { kernels, schedule, ast, occurrences })
    };
    let mut l = launched(&mapping)?;
    let split = split_launches(ctx, &l.kernels, &l.occurrences)?;
    if !split.is_empty() {
        l = launched(&Mapping { unpromoted: split, ..mapping })?;
    }
    let code = Code { ctx, source, scop, opts, prefix: &prefix, guard: guard.as_deref() };
    let (bodies, emulated_bodies) = code.kernel_bodies(&l)?;
    let emulated = emulated_bodies
        .iter()
        .map(|(shape, body)| {
            let (shape, body) = (shape.clone(), body.clone());
            Box::new(move |values: &[String]| shape.emulated(&body, values)) as print::Launch
        })
        .collect();
    let (write_back, last) = write_back(ctx, &runs, scop)?;
    let region = guarded(source, scop, code.guard, &format!("{}{write_back}", code.host(&l.ast, emulated)?));
    let program = splice(source, scop, &region)?;
    let cuda = code.cuda_form(&l.ast, &bodies, &write_back, &last)?;
    // The emulation as it would stand in the user's file: what `export`
    // verifies of a GPU winner on the CPU.
    let exported = Exported { block: plain_block(scop, &region), ..Exported::default() };
    Ok(Variant { program, region, schedule: l.schedule, bands: Vec::new(), cuda, exported: Some(exported) })
}

/// The kernels of a mapping, the host tree's text, its AST and each
/// occurrence of a kernel's mark in it (the kernel, its instances there).
struct Launched {
    kernels: Vec<Kernel>,
    schedule: String,
    ast: ASTNode,
    occurrences: Vec<(usize, String)>,
}

/// A kernel's shape and its code (for the GPU, or as emulated).
type Body = (Shape, String);

/// What printing a GPU variant's code needs.
struct Code<'a> {
    ctx: &'a Context,
    source: &'a Source,
    scop: &'a Scop,
    opts: &'a CodegenOptions,
    prefix: &'a str,
    /// Where every statement runs ([`every_statement_runs`]); elsewhere the
    /// code as written runs.
    guard: Option<&'a str>,
}

impl Code<'_> {
    /// One kernel per occurrence of a mark in host code, for its instances:
    /// each kernel's code for the GPU, and as its emulation runs it (the
    /// same code, in phases where it has barriers).
    fn kernel_bodies(&self, l: &Launched) -> Result<(Vec<Body>, Vec<Body>), CodegenError> {
        let (mut bodies, mut emulated_bodies) = (Vec::new(), Vec::new());
        for (k, instances) in &l.occurrences {
            let kernel = &l.kernels[*k];
            let what = || "a kernel's tree".to_string();
            let instances = UnionSet::read_from_str(self.ctx, instances).ctx(what)?;
            let tree = kernel.tree.copy().ctx(what)?.intersect_domain(instances).ctx(what)?;
            let (prelude, postlude) = match &kernel.promotion {
                Some(p) => (p.prelude.as_str(), p.postlude.as_str()),
                None => ("", ""),
            };
            let (body, emulated) = match &kernel.full {
                // Full blocks apart, in code without the domains' bounds.
                Some((full, condition)) => {
                    let (b1, e1) = self.kernel_code(&kernel.shape, full, tree.copy().ctx(what)?, 2)?;
                    let (b2, e2) = self.kernel_code(&kernel.shape, &kernel.context, tree, 2)?;
                    let version =
                        |a: &str, b: &str| format!("  if ({condition}) {{\n{a}  }} else {{\n{b}  }}\n");
                    (version(&b1, &b2), version(&e1, &e2))
                }
                None => self.kernel_code(&kernel.shape, &kernel.context, tree, 1)?,
            };
            bodies.push((kernel.shape.clone(), format!("{prelude}{body}{postlude}")));
            emulated_bodies.push((kernel.shape.clone(), format!("{prelude}{emulated}{postlude}")));
        }
        Ok((bodies, emulated_bodies))
    }

    /// A kernel's code and its emulation, in `context`, at `indent`.
    fn kernel_code(
        &self,
        shape: &Shape,
        context: &str,
        tree: Schedule,
        indent: usize,
    ) -> Result<(String, String), CodegenError> {
        let ast = build_ast_without_else(self.ctx, context, tree, self.prefix)?;
        let mut body = Printer {
            unroll_whole: if self.opts.code.gpu_unroll { UNROLL_WHOLE } else { 0 },
            ..self.printer(indent)
        };
        body.node(&ast, None)?;
        // The emulation is C for gcc: no CUDA pragmas.
        let mut emulated = self.printer(indent);
        if shape.phased {
            emulated.phased(&ast, &shape.thread_loops())?;
        } else {
            emulated.node(&ast, None)?;
        }
        Ok((body.out, emulated.out))
    }

    fn printer(&self, indent: usize) -> Printer {
        Printer::plain(indent, MACRO_PREFIX, self.prefix, arities(self.scop))
    }

    /// The host code, each kernel's occurrence printed by `launches`.
    fn host(&self, ast: &ASTNode, launches: Vec<print::Launch>) -> Result<String, CodegenError> {
        let mut printer = Printer { launches, ..self.printer(1) };
        printer.node(ast, None)?;
        Ok(printer.out)
    }

    /// The CUDA form, where the region can be a function of its data: the
    /// unit, the program calling it and the program counting its launches.
    fn cuda_form(
        &self,
        ast: &ASTNode,
        bodies: &[Body],
        write_back: &str,
        last: &cuda::Last,
    ) -> Result<Option<Cuda>, CodegenError> {
        let (source, scop) = (self.source, self.scop);
        let outliner = outline::Outliner::new(scop, &statement_macros(scop), &undef_macros(scop));
        // Where isl cannot tell what the region reads first, every array.
        let copied_in = cuda::copied_in(self.ctx, scop)
            .unwrap_or_else(|_| scop.arrays.iter().map(|a| a.name.clone()).collect());
        let (Some(o), Ok(data)) = (outliner, cuda::data(scop, &copied_in, last)) else { return Ok(None) };
        let launches = bodies
            .iter()
            .enumerate()
            .map(|(n, (shape, _))| {
                let (shape, args) = (shape.clone(), cuda::launch_args(&o, shape, &data.data));
                Box::new(move |values: &[String]| shape.launch(n, values, &args)) as print::Launch
            })
            .collect();
        let host = self.host(ast, launches)?;
        let mut c = cuda::unit(scop, &o, bodies, &host, &data, self.opts.code.gpu_min_blocks);
        let call = guarded(source, scop, self.guard, &format!("{}{write_back}", c.program));
        c.program = splice(source, scop, &call)?;
        c.region = plain_block(scop, &call);
        let counters = bodies
            .iter()
            .map(|(shape, _)| {
                let shape = shape.clone();
                Box::new(move |values: &[String]| shape.counted(values)) as print::Launch
            })
            .collect();
        let count = format!(
            "  long polytune_launches = 0;\n{}  polytune_rt_dump(\"polytune_launches\", \"long\", &polytune_launches, sizeof polytune_launches);\n",
            guarded(source, scop, self.guard, &self.host(ast, counters)?)
        );
        c.counting = splice(source, scop, &count)?;
        Ok(Some(c))
    }
}
