//! `polytune export`: the user's own file with each machine's winner in
//! place of its SCoP, plain C and OpenMP without any of the measurement's
//! instrumentation, built and verified against the original before the
//! caller writes it.
//!
//! The winners come from the store (`Store::best` per machine), their code
//! from the same pipeline that measured them (`executor::pipeline`, on the
//! stored schedule), the statement macros expanded by the C preprocessor as
//! the measured build expanded them (`expand`), the text put together by
//! `assemble` and checked by `verify`.

pub mod assemble;
mod verify;
mod write;

use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};
use executor::machine::Fingerprint;
use executor::pipeline;
use store::{Best, Store};
use vocab::knobs::{Point, Scheduler};

use crate::campaign::{Config, KernelSpec};
use crate::program::{self, Dataset, Program, ProgramConfig};
use assemble::{Branch, Layout};

/// Which machines' winners go into the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Machines {
    /// The best of all machines (as `polytune best` answers).
    Best,
    /// These machines, by name, in this order.
    Named(Vec<String>),
    /// Every machine with a verified winner.
    All,
}

/// What to export.
#[derive(Debug, Clone)]
pub struct Request {
    /// A kernel name (the C file's stem) or the C file itself.
    pub kernel: String,
    pub machines: Machines,
    pub dataset: Option<Dataset>,
    /// The machine profile whose compiler and slot verify the export.
    pub profile: String,
}

/// An exported file, verified.
#[derive(Debug, Clone)]
pub struct Export {
    /// The user's file the export comes from.
    pub file: PathBuf,
    pub text: String,
    /// Each branch: its label, its machine and point, and what it was measured at.
    pub branches: Vec<String>,
    /// Machines whose winner is the original (no copy of theirs).
    pub unchanged: Vec<String>,
    /// How the file is built, as the winners were.
    pub compile: String,
    /// The verified builds, one line each.
    pub verified: Vec<String>,
    /// A GPU winner's CUDA unit (its kernels and the host function the
    /// file calls), to be written beside the file with the extension `.cu`.
    pub cuda: Option<String>,
}

/// A GPU winner's CUDA unit and its emulation's code (what is verified on
/// the CPU).
struct Gpu {
    unit: String,
    emulation: codegen::Exported,
}

/// One machine's winner with the program it was measured on.
struct Winner {
    best: Best,
    point: Point,
    label: String,
    cpu_model: String,
}

/// One SCoP's part of an export: where it stands and what replaces it,
/// verified.
struct Part {
    kernel: String,
    /// The C function that holds the SCoP.
    function: String,
    original: String,
    layout: Layout,
    /// Each machine's code and the comment above it all.
    branches: Vec<Branch>,
    header: Vec<String>,
    build: ProgramConfig,
    dataset: Dataset,
    export: Export,
}

/// Makes the export of `request` from `db`; writes nothing. A kernel is its
/// one SCoP; a file is every SCoP of it the store has a winner for (the
/// others stay as written).
pub fn export(db: &Store, request: &Request) -> Result<Export> {
    let (kernel, named_file) = kernel_and_file(&request.kernel);
    let Some(file) = named_file else { return part(db, &kernel, None, request).map(|p| p.export) };
    let kernels = kernels_of(db, &kernel, &file)?;
    if kernels.len() <= 1 {
        return part(db, &kernel, Some(file), request).map(|p| p.export);
    }
    let mut parts = Vec::new();
    let mut skipped = Vec::new();
    for k in &kernels {
        match part(db, k, Some(file.clone()), request) {
            Ok(p) => parts.push(p),
            // A SCoP nothing beat stays as written.
            Err(e) if e.is_no_result() => skipped.push(format!("{k}: {e}")),
            Err(e) => return Err(e),
        }
    }
    if parts.is_empty() {
        return Err(Error::NoResult(format!(
            "{}: no SCoP has a winner to export:\n  {}",
            file.display(),
            skipped.join("\n  ")
        )));
    }
    if let Some(p) = parts.iter().find(|p| p.export.cuda.is_some()) {
        return Err(Error::input_at(
            file.display(),
            format!(
                "kernel {}'s winner is a GPU variant, whose CUDA unit is a file of its own: export it alone \
             (polytune export {})",
                p.kernel, p.kernel
            ),
        ));
    }
    let text = together(&parts);
    let first = &parts[0];
    let profile = program::machine_profile(&request.profile)?;
    // Each machine's define, as the user may build it, and none.
    let machines = assemble::Machines::of(parts.iter().flat_map(|p| &p.branches), &first.function);
    let mut defines: Vec<Option<String>> = vec![None];
    if machines.labels.len() > 1 {
        defines.extend(machines.labels.iter().map(|(l, _)| Some(format!("-DPOLYTUNE_TARGET={l}"))));
    }
    let mut export = Export { file, text, ..first.export.clone() };
    export.branches.clear();
    export.unchanged = skipped;
    export.verified.clear();
    for d in &defines {
        verify::file_compiles(
            &export.file,
            &export.text,
            &first.build,
            first.dataset,
            &profile,
            d.as_deref(),
        )?;
        let with = d.as_ref().map(|d| format!(" with {d}")).unwrap_or_default();
        export.verified.push(format!("the file with {} SCoPs replaced{with}: compiles", parts.len()));
    }
    for p in &parts {
        export.branches.extend(p.export.branches.iter().map(|b| format!("{}: {b}", p.kernel)));
        export.unchanged.extend(p.export.unchanged.iter().map(|m| format!("{}: {m}", p.kernel)));
        export.verified.extend(p.export.verified.iter().map(|v| format!("{}: {v}", p.kernel)));
    }
    Ok(export)
}

/// The file with every part in place. With several machines among the
/// parts, one table numbers them for the whole file (the choice defined
/// once, before the first function) and every region chooses by it, so
/// that a machine whose winner for a SCoP is the original runs it as
/// written. Parts that share a function share what stands around it (one
/// `push_options`, each target line once).
fn together(parts: &[Part]) -> String {
    let all = parts.iter().flat_map(|p| &p.branches);
    let machines = Some(assemble::Machines::of(all, &parts[0].function)).filter(|m| m.labels.len() > 1);
    let mut pieces: Vec<assemble::Pieces> = Vec::with_capacity(parts.len());
    let mut defined = false;
    for (i, p) in parts.iter().enumerate() {
        let function = p.layout.function_first;
        let original = assemble::original_region(&p.original, &p.layout);
        let region = assemble::region(&p.branches, machines.as_ref(), &original);
        if parts[..i].iter().any(|q| q.layout.function_first == function) {
            pieces.push(assemble::Pieces { region, ..Default::default() });
            continue;
        }
        let group: Vec<(&[assemble::Branch], &[String])> = parts[i..]
            .iter()
            .filter(|q| q.layout.function_first == function)
            .map(|q| (q.branches.as_slice(), q.header.as_slice()))
            .collect();
        let (before, after) = assemble::around(&group, machines.as_ref().map(|m| (m, !defined)));
        defined = true;
        pieces.push(assemble::Pieces { before, region, after });
    }
    let placed: Vec<(Layout, &assemble::Pieces, &str)> =
        parts.iter().zip(&pieces).map(|(p, q)| (p.layout, q, q.region.as_str())).collect();
    assemble::splice_all(&parts[0].original, &placed)
}

/// The kernels of the store tuned from SCoPs of `file` (named `stem` and
/// `stem.N`), in the order of their SCoPs.
fn kernels_of(db: &Store, stem: &str, file: &Path) -> Result<Vec<String>> {
    let same = |p: &Path| match (p.canonicalize(), file.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => p == file,
    };
    let mut found: Vec<(usize, String)> = Vec::new();
    for name in db.kernels()? {
        let ours = name == stem
            || name
                .strip_prefix(stem)
                .and_then(|r| r.strip_prefix('.'))
                .is_some_and(|n| n.parse::<usize>().is_ok());
        if !ours {
            continue;
        }
        if let Some(spec) = crate::campaign::stored_kernel(db, &name).filter(|k| same(&k.path)) {
            found.push((spec.scop, name));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, n)| n).collect())
}

/// The export of kernel `kernel` alone (from `named_file` if given, else
/// from the file its winner was measured on).
fn part(db: &Store, kernel: &str, named_file: Option<PathBuf>, request: &Request) -> Result<Part> {
    let kernel = kernel.to_string();
    let winners = winners(db, &kernel, request)?;
    let first = &winners[0].best;
    let file = named_file.unwrap_or_else(|| PathBuf::from(&first.program_path));
    let dataset: Dataset = serde_json::from_value(serde_json::Value::String(first.dataset.clone()))
        .with_context(|| format!("the store's dataset `{}` is not one polytune knows", first.dataset))?;
    let config = campaign_config(db, first.campaign)?;
    let spec = config.kernels.iter().find(|k| k.name == kernel);
    check_unchanged(&file, first, spec)?;
    let build = spec.map(|k| k.build.clone()).unwrap_or_default();
    // A replayed campaign's export is verified on its capture.
    let capture = spec.and_then(|k| k.capture.clone());
    let program = program::load(&file, dataset, &build, spec.map_or(0, |k| k.scop))?;
    let original =
        std::fs::read_to_string(&file).with_context(|| format!("{}: cannot read", file.display()))?;
    let layout = layout(&file, &program, &original)?;
    let profile = program::machine_profile(&request.profile)?;
    let compiler = profile.compiler();
    let several = winners.len() > 1;
    let (branches, unchanged, gpu) = branches(&file, &program, &winners, &compiler, &build, request)?;
    if branches.is_empty() {
        return Err(Error::NoResult(format!(
            "kernel `{kernel}`: no machine's winner is faster than the original ({}); there is nothing to export",
            unchanged.join(", ")
        )));
    }
    let compile = compile_line(first, &build);
    let header = header(&kernel, &file, &branches, &compile, gpu.is_some());
    let written = assemble::original_region(&original, &layout);
    let pieces = assemble::pieces(&branches, &program.scop.function, &header, &written);
    let text = assemble::splice(&original, &layout, &pieces, &pieces.region);
    let exported: Vec<&Winner> =
        winners.iter().filter(|w| branches.iter().any(|b| b.label == w.label)).collect();
    // A GPU winner's outputs are checked on its emulation, and the file
    // that calls its host function and the unit are compiled.
    let emulated = gpu.as_ref().map(|g| {
        let block = format!("{{\n{}{}}}\n", size_guards(&program.scop), g.emulation.block);
        let branch = Branch { block, ..branches[0].clone() };
        assemble::pieces(&[branch], &program.scop.function, &header, &written)
    });
    let mut verified = verify::verify(&verify::Target {
        file: &file,
        original: &original,
        layout: &layout,
        pieces: emulated.as_ref().unwrap_or(&pieces),
        program: &program,
        build: &build,
        dataset,
        profile: &profile,
        tolerance: config.tolerance,
        branches: &exported,
        blocks: &branches,
        several,
        capture: capture.as_deref(),
    })?;
    if let Some(g) = &gpu {
        if capture.is_some() {
            return Err(Error::input_at(
                file.display(),
                "a GPU winner of a replayed campaign is not exported yet",
            ));
        }
        for v in &mut verified {
            *v = format!("its emulation on the CPU, {v}");
        }
        verified.extend(verify::cuda_builds(&file, &text, &g.unit, &build, dataset, &profile)?);
    }
    let export = Export {
        file,
        text,
        branches: exported
            .iter()
            .map(|w| {
                let noise = w.best.clear_of_original == Some(false);
                let caveat = if noise { format!("; {NOT_SIGNIFICANT}") } else { String::new() };
                format!(
                    "{} (machine {}): {:.2}x with {}{caveat}",
                    w.label, w.best.machine, w.best.speedup, w.point
                )
            })
            .collect(),
        unchanged,
        compile,
        verified,
        cuda: gpu.map(|g| g.unit),
    };
    let function = program.scop.function.clone();
    Ok(Part { kernel, function, original, layout, branches, header, build, dataset, export })
}

/// Each machine's winner as a branch of the export, the machines whose
/// winner is the original, and a GPU winner's forms (exported alone).
fn branches(
    file: &Path,
    program: &Program,
    winners: &[Winner],
    compiler: &executor::build::Compiler,
    build: &program::ProgramConfig,
    request: &Request,
) -> Result<(Vec<Branch>, Vec<String>, Option<Gpu>)> {
    let mut branches = Vec::new();
    let mut unchanged = Vec::new();
    let several = winners.len() > 1;
    let mut gpu: Option<Gpu> = None;
    for w in winners {
        // The original stays where nothing was faster.
        if w.best.speedup <= 1.0 {
            unchanged.push(w.best.machine.clone());
            continue;
        }
        let at = format!(
            "{}:{}: the winner of machine {}",
            file.display(),
            program.scop.start.line,
            w.best.machine
        );
        let (code, on_gpu) = variant_code(program, w, compiler, build).context(at.clone())?;
        if on_gpu.is_some() && several {
            return Err(Error::input(format!(
                "{at} is a GPU variant, which is exported alone: name its machine (--machine {})",
                w.best.machine
            )));
        }
        gpu = gpu.or(on_gpu);
        let code = if several { rename_all(code, &w.label) } else { code };
        branches.push(Branch {
            label: w.label.clone(),
            cpu_model: w.cpu_model.clone(),
            about: about(w, &request.kernel),
            target: code.target,
            file_scope: format!("{}{}", code.declarations, assemble::make_static(&code.helpers)),
            block: format!("{{\n{}{}}}\n", size_guards(&program.scop), code.block),
        });
    }
    Ok((branches, unchanged, gpu))
}

/// `gemm` or `path/gemm.c`: the kernel's name, and the file if one was named.
fn kernel_and_file(arg: &str) -> (String, Option<PathBuf>) {
    let path = Path::new(arg);
    if arg.ends_with(".c") || path.is_file() {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or(arg).to_string();
        return (stem, Some(path.to_path_buf()));
    }
    (arg.to_string(), None)
}

/// The winners the request names, each with its point; an unknown kernel
/// or machine, or one without a verified winner, is an error.
fn winners(db: &Store, kernel: &str, request: &Request) -> Result<Vec<Winner>> {
    let dataset = request.dataset.map(|d| d.name());
    let known = db.kernels()?;
    if !known.iter().any(|k| k == kernel) {
        return Err(Error::NoResult(format!(
            "no kernel `{kernel}` in the store (kernels: {})",
            if known.is_empty() { "none yet".to_string() } else { known.join(", ") }
        )));
    }
    let machines = db.machines()?;
    let mut names: Vec<String> = Vec::new();
    for m in &machines {
        if !names.contains(&m.name) {
            names.push(m.name.clone());
        }
    }
    let asked: Vec<Option<String>> = match &request.machines {
        Machines::Best => vec![None],
        Machines::All => names.iter().cloned().map(Some).collect(),
        Machines::Named(list) => {
            for m in list {
                if !names.contains(m) {
                    return Err(Error::input(format!(
                        "no machine `{m}` in the store (machines: {})",
                        names.join(", ")
                    )));
                }
            }
            list.iter().cloned().map(Some).collect()
        }
    };
    let mut out: Vec<Winner> = Vec::new();
    for machine in asked {
        let best = db.best(kernel, machine.as_deref(), dataset)?;
        let Some(best) = best else {
            if request.machines == Machines::All {
                continue;
            }
            return Err(Error::NoResult(format!(
                "no verified variant of kernel `{kernel}`{}{} in the store",
                machine.map(|m| format!(" on machine `{m}`")).unwrap_or_default(),
                dataset.map(|d| format!(" at {d}")).unwrap_or_default(),
            )));
        };
        let point: Point = serde_json::from_str(&best.point_json)
            .with_context(|| format!("point {}: not a point this polytune reads", best.point_id))?;
        let fingerprint: Option<Fingerprint> = serde_json::from_str(&best.machine_fingerprint).ok();
        let mut label = assemble::label(&best.machine);
        if out.iter().any(|w| w.label == label) {
            label = format!("{label}_{}", out.len() + 1);
        }
        out.push(Winner {
            cpu_model: fingerprint.map(|f| f.cpu_model).unwrap_or_default(),
            label,
            point,
            best,
        });
    }
    let Some(first) = out.first() else {
        return Err(Error::NoResult(format!("no verified variant of kernel `{kernel}` on any machine")));
    };
    if let Some(other) = out.iter().find(|w| w.best.dataset != first.best.dataset) {
        return Err(Error::input(format!("kernel `{kernel}`: machine {}'s winner is for {} and machine {}'s for {}; name one with --dataset", first.best.machine, first.best.dataset, other.best.machine, other.best.dataset)));
    }
    if let Some(other) = out.iter().find(|w| w.best.source_hash != first.best.source_hash) {
        return Err(Error::input(format!("kernel `{kernel}`: machines {} and {} tuned different versions of its file; tune it again on one of them", first.best.machine, other.best.machine)));
    }
    Ok(out)
}

/// The file must be the one that was tuned (its hash).
fn check_unchanged(file: &Path, best: &Best, spec: Option<&KernelSpec>) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
    let hash = program::sha256_hex(&bytes);
    let hash = spec
        .map_or_else(|| hash.clone(), |k| crate::campaign::program_hash(&hash, k.scop, k.build.autodetect));
    if hash != best.source_hash {
        return Err(Error::input_at(file.display(), format!("the file has changed since it was tuned (campaign {} tuned {}); tune it again, or export from the file that was tuned", best.campaign, best.program_path)));
    }
    Ok(())
}

fn campaign_config(db: &Store, id: i64) -> Result<Config> {
    let Some(stored) = db.campaigns()?.into_iter().find(|c| c.id == id) else {
        return Err(Error::input_at(db.target(), format!("no campaign has id {id}")));
    };
    serde_json::from_str(&stored.config)
        .with_context(|| format!("campaign {id}: its configuration is not one this polytune reads"))
}

/// Where the SCoP and its function stand in the user's file.
fn layout(file: &Path, program: &Program, original: &str) -> Result<Layout> {
    let (source, scop) = (&program.source, &program.scop);
    let at = |byte: usize| source.location(byte).map(|l| l.line as usize);
    let (f0, f1) = scop.function_span;
    let found = (f1 > f0).then(|| (at(f0), at(f1 - 1), at(scop.span.1.saturating_sub(1))));
    let Some((Some(function_first), Some(function_last), Some(scop_last))) = found else {
        return Err(Error::input(format!("{}:{}: the SCoP's function does not stand in the file itself (a macro or an included file makes it); \
             export needs its lines", file.display(), scop.start.line)));
    };
    let first = scop.start.line as usize;
    // A region found without pragmas: its own lines.
    if scop.detected {
        let last = scop.last_line(source) as usize;
        let layout =
            Layout { function_first, function_last, scop_first: first, scop_last: last, marked: false };
        return Ok(layout);
    }
    let layout = Layout { function_first, function_last, scop_first: first, scop_last, marked: true };
    let lines: Vec<&str> = original.lines().collect();
    let pragma = |n: usize, word: &str| {
        lines.get(n.wrapping_sub(1)).is_some_and(|l| {
            let words: Vec<&str> = l.trim_start().trim_start_matches('#').split_whitespace().collect();
            words.first() == Some(&"pragma") && words.get(1) == Some(&word)
        })
    };
    if !pragma(layout.scop_first, "scop") || !pragma(layout.scop_last, "endscop") {
        return Err(Error::input(format!("{}:{}: the SCoP's pragmas are not lines of their own in the file; export replaces the lines from \
             `#pragma scop` to `#pragma endscop`", file.display(), scop.start.line)));
    }
    Ok(layout)
}

/// A winner's code, regenerated from its stored schedule, the statement
/// macros expanded; of a GPU winner, the call of its host function, with
/// its unit and its emulation.
fn variant_code(
    program: &Program,
    w: &Winner,
    compiler: &executor::build::Compiler,
    build: &ProgramConfig,
) -> Result<(codegen::Exported, Option<Gpu>)> {
    if let Scheduler::Peer { name } = &w.point.scheduler {
        return Err(Error::input(format!(
            "the winner is the peer {name}, a compiler's own build of the code as written"
        )));
    }
    let (scop, deps) = (&program.scop, &program.deps);
    let schedule = match &w.best.schedule {
        Some(s) => s.clone(),
        None => pipeline::schedule_of(scop, deps, &w.point)?,
    };
    let variant = pipeline::generate_variant(
        &program.source,
        scop,
        deps,
        &pipeline::codegen_options(&w.point),
        &schedule,
    )?;
    let Some(code) = variant.exported else {
        return Err(Error::failed("code generation gave no exportable form"));
    };
    let code = codegen::Exported {
        helpers: expand(&code.helpers, compiler, build)?,
        block: expand(&code.block, compiler, build)?,
        ..code
    };
    if !w.point.on_gpu() {
        return Ok((code, None));
    }
    let Some(cuda) = variant.cuda else {
        return Err(Error::input(
            "the winner is a GPU variant with no CUDA form (its region is not a function of its arrays)",
        ));
    };
    let call = codegen::Exported { block: expand(&cuda.region, compiler, build)?, ..Default::default() };
    Ok((call, Some(Gpu { unit: cuda.exported_unit, emulation: code })))
}

/// Compile-time checks that the arrays' rows have the literal extents the
/// code was generated for (PolyBench's `double C[1000 + 0][1100 + 0]`): a
/// build with other sizes is an error, not wrong results. Rows whose
/// extents are variables (`double C[ni][nj]`) need none.
fn size_guards(scop: &model::scop::Scop) -> String {
    let literal = |e: &str| e.chars().all(|c| c.is_ascii_digit() || " \t+-*/%()uUlL".contains(c));
    let mut out = String::new();
    for a in scop.arrays.iter().filter(|a| !a.local && !a.is_struct_member() && a.rank() >= 2) {
        let rows: Option<Vec<&str>> =
            a.extents[1..].iter().map(|e| e.as_deref().filter(|e| literal(e))).collect();
        let Some(rows) = rows else { continue };
        let cells: String = rows.iter().map(|e| format!("({}) * ", e.trim())).collect();
        out.push_str(&format!(
            "  _Static_assert(sizeof({name}[0]) == {cells}sizeof({ty}), \"polytune export: the rows of {name} are \
             not the size this code was tuned for; tune again at this size\");\n",
            name = a.name,
            ty = a.element_type.trim(),
        ));
    }
    out
}

/// `code` through the C preprocessor: our statement and AST macros
/// expanded, exactly as the measured build expanded them. The code is
/// preprocessed already otherwise (the statements' text comes from the
/// preprocessed file), so nothing of the user's is expanded twice.
fn expand(code: &str, compiler: &executor::build::Compiler, build: &ProgramConfig) -> Result<String> {
    use std::io::Write;
    if code.is_empty() {
        return Ok(String::new());
    }
    let mut child = std::process::Command::new(&compiler.cc)
        .args(&compiler.flags)
        .args(&build.cflags)
        .args(["-E", "-P", "-x", "c", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run `{}` to expand the statement macros", compiler.cc))?;
    let mut stdin = child.stdin.take().ok_or_else(|| Error::failed("the preprocessor's input"))?;
    let text = code.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().context("the preprocessor")?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(Error::failed(format!(
            "`{} -E` failed on the generated code: {}",
            compiler.cc,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn rename_all(code: codegen::Exported, tag: &str) -> codegen::Exported {
    codegen::Exported {
        target: code.target,
        declarations: assemble::rename(&code.declarations, tag),
        helpers: assemble::rename(&code.helpers, tag),
        block: assemble::rename(&code.block, tag),
    }
}

/// The caveat of a winner whose lead may be noise.
pub const NOT_SIGNIFICANT: &str =
    "its lead over the original is not significant (Welch's t-test on log times, 5%): measure again to be sure";

/// What was chosen and why, for the comment above a machine's block.
fn about(w: &Winner, asked: &str) -> Vec<String> {
    let b = &w.best;
    let pct = |s: Option<f64>| s.map(|s| format!("{:.1}%", 100.0 * s)).unwrap_or("-".into());
    let mut lines = vec![
        format!(
            "polytune: the fastest verified variant on machine {} ({}), {}",
            b.machine, w.cpu_model, b.dataset
        ),
        format!(
            "{:.2}x the original: {:.6} s (spread {}) against {:.6} s (spread {}), {} threads",
            b.speedup,
            b.median_s,
            pct(b.spread),
            b.reference_median_s,
            pct(b.reference_spread),
            w.point.threads
        ),
        format!("point {}: {}", b.point_id, w.point),
        format!("campaign {}, measured {}", b.campaign, b.measured_at),
        format!("again: polytune export {asked} --machine {} --dataset {}", b.machine, b.dataset),
    ];
    if b.clear_of_original == Some(false) {
        lines.push(NOT_SIGNIFICANT.into());
    }
    for (k, v) in w.point.code.run_env() {
        lines.push(format!("measured with {k}={v} in the environment"));
    }
    lines
}

/// How the winners' machine compiled them (its profile's compiler and
/// flags, and the program's own).
fn compile_line(best: &Best, build: &ProgramConfig) -> String {
    let fingerprint: Option<Fingerprint> = serde_json::from_str(&best.machine_fingerprint).ok();
    let (cc, flags) = match fingerprint {
        Some(f) => (f.compiler, f.flags),
        None => ("cc".to_string(), Vec::new()),
    };
    [vec![cc], flags, build.cflags.clone()].concat().join(" ")
}

fn header(kernel: &str, file: &Path, branches: &[Branch], compile: &str, gpu: bool) -> Vec<String> {
    let mut lines = vec![
        format!(
            "polytune {} export of kernel {kernel} ({}): the SCoP of this file's function below, tuned",
            env!("CARGO_PKG_VERSION"),
            file.file_name().and_then(|n| n.to_str()).unwrap_or("")
        ),
        format!("compile as it was measured: {compile}"),
    ];
    if branches.len() > 1 {
        let labels: Vec<&str> = branches.iter().map(|b| b.label.as_str()).collect();
        lines.push(format!(
            "one variant per machine ({}): -DPOLYTUNE_TARGET=<machine> chooses at build time, else the CPU model \
             at run time (POLYTUNE_MACHINE=<machine> forces one), else the code as written",
            labels.join(", ")
        ));
    }
    if gpu {
        lines.push(
            "the region runs on the GPU: the host function it calls and its kernels are in the CUDA unit written \
             beside this file (its name with `.cu`); compile that with `nvcc -O3 -arch=native -c` and link its \
             object with -lcudart"
                .into(),
        );
    }
    lines.push("the code holds the sizes and extents it was tuned at; tune again for others".into());
    lines
}
