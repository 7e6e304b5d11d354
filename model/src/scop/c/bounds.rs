//! Accesses against the declared extents of their arrays, as pet checks
//! them: a reference that leaves its array for every parameter value under
//! which its statement runs is refused, with the access, the extent and the
//! first offending instance.

use super::*;
use crate::scop::isl_name;

impl Walk<'_> {
    /// Reads the declared extents of `name` (once per array) as affine
    /// expressions of the parameters; an extent that is not one, or that
    /// names a symbol the SCoP does not otherwise use, is unknown (`None`).
    pub(super) fn note_extents(&mut self, name: &str, decl: &Decl) {
        if self.extents.contains_key(name) {
            return;
        }
        let root = self.root;
        let mut out = Vec::new();
        for span in &decl.sizes {
            let node = span.and_then(|(a, b)| {
                root.descendant_for_byte_range(a, b).filter(|n| n.start_byte() == a && n.end_byte() == b)
            });
            let value = match node {
                // At file scope a name nobody declares would be inferred from its use here.
                Some(n) if self.fragment => self.constant(n).map(|c| c.to_string()),
                Some(n) => {
                    let (params, conds) = (self.params.len(), std::mem::take(&mut self.conds));
                    let loops = std::mem::take(&mut self.loops);
                    let value = self.affine(n).ok();
                    (self.conds, self.loops) = (conds, loops);
                    if self.params.len() > params {
                        self.params.truncate(params);
                        None
                    } else {
                        value
                    }
                }
                None => None,
            };
            out.push(value);
        }
        self.extents.insert(name.to_string(), out);
    }

    /// Refuses an access that leaves its array's declared extents for
    /// every parameter value under which its statement runs (for some
    /// values only, such as PolyBench's `i < n` over `A[1000]` with `n`
    /// unbounded, the program is taken to run with the others).
    pub(super) fn check_extents(&self) -> Result<()> {
        let ctx = crate::isl::new_context();
        let context = Set::read_from_str(&ctx, &self.pinned_context()).map_err(|e| {
            ScopError::new(&self.src.path, None, format!("internal error: isl rejects the context: {e:?}"))
        })?;
        // Per array, the elements outside its extents (read once: a
        // statement of thousands of references reads few arrays).
        let mut outside_of: HashMap<&str, Set> = HashMap::new();
        for s in &self.statements {
            // The statement's instances under the context, once for its references.
            let mut domain: Option<Set> = None;
            for a in &s.accesses {
                let Some(extents) = self.extents.get(&a.array) else { continue };
                if extents.iter().all(Option::is_none) {
                    continue;
                }
                let internal = |e: isl_rs::LibISLError| {
                    ScopError::new(
                        &self.src.path,
                        Some(s.location),
                        format!("internal error: isl fails on the extent check of `{}`: {e:?}", a.text),
                    )
                };
                let vars: Vec<String> = (0..extents.len()).map(|d| format!("x{d}")).collect();
                let outside = match outside_of.get(a.array.as_str()) {
                    Some(o) => o.copy().map_err(internal)?,
                    None => {
                        let outside: Vec<String> = extents
                            .iter()
                            .enumerate()
                            .filter_map(|(d, e)| e.as_ref().map(|e| format!("x{d} < 0 or x{d} >= {e}")))
                            .collect();
                        let outside = format!(
                            "[{}] -> {{ {}[{}] : {} }}",
                            self.params.join(", "),
                            isl_name(&a.array),
                            vars.join(", "),
                            outside.join(" or ")
                        );
                        let o = Set::read_from_str(&ctx, &outside).map_err(internal)?;
                        outside_of.insert(a.array.as_str(), o.copy().map_err(internal)?);
                        o
                    }
                };
                let domain = match &domain {
                    Some(d) => d.copy().map_err(internal)?,
                    None => {
                        let d = Set::read_from_str(&ctx, &s.domain)
                            .and_then(|d| d.intersect_params(context.copy()?))
                            .map_err(internal)?;
                        domain.insert(d).copy().map_err(internal)?
                    }
                };
                let offending = Map::read_from_str(&ctx, &a.relation)
                    .and_then(|m| m.intersect_domain(domain.copy()?))
                    .and_then(|m| m.intersect_range(outside))
                    .map_err(internal)?;
                if offending.is_empty().map_err(internal)? {
                    continue;
                }
                let runs = domain.params().map_err(internal)?;
                let leaves = offending.copy().and_then(|m| m.params()).map_err(internal)?;
                if !runs.is_subset(&leaves).map_err(internal)? {
                    continue;
                }
                let declared: String = extents
                    .iter()
                    .zip(
                        &self
                            .arrays
                            .iter()
                            .find(|x| x.name == a.array)
                            .map(|x| x.extents.clone())
                            .unwrap_or_default(),
                    )
                    .map(|(isl, c)| format!("[{}]", c.as_deref().or(isl.as_deref()).unwrap_or("")))
                    .collect();
                let mut names: Vec<String> = self.params.clone();
                names.extend(s.iterators.iter().cloned());
                names.extend(vars.iter().cloned());
                let first =
                    offending.copy().and_then(|m| m.wrap()).and_then(|w| w.flatten()).map_err(internal)?;
                let first = match model::first_values(first) {
                    Some(values) if values.len() == names.len() => {
                        let k = self.params.len() + s.iterators.len();
                        let at: Vec<String> = names[..k]
                            .iter()
                            .zip(&values[..k])
                            // Literals modelled as parameters have their values.
                            .filter(|(n, _)| !self.constants.iter().any(|(p, _)| p == *n))
                            .map(|(n, v)| format!("{n} = {v}"))
                            .collect();
                        let at = if at.is_empty() { String::new() } else { format!(" at {}", at.join(", ")) };
                        format!(": first{at}, where it touches `{}[{}]`", a.array, values[k..].join("]["))
                    }
                    _ => format!(": `{}`", offending.to_str().map_err(internal)?),
                };
                let what = match a.kind {
                    crate::scop::AccessKind::Read => "reads",
                    crate::scop::AccessKind::Write => "writes",
                };
                return Err(ScopError::new(
                    &self.src.path,
                    Some(s.location),
                    format!(
                        "`{}` {what} outside `{}{declared}` whenever the statement runs{first}",
                        a.text, a.array
                    ),
                ));
            }
        }
        Ok(())
    }
}
