//! From the walk to the model: isl-normalised domains and accesses, parameters, the original schedule tree.

use super::*;

impl Walk<'_> {
    /// Checks every domain and access with isl and keeps isl's simplified text
    /// (an empty domain keeps ours: isl would drop its tuple name).
    fn normalize(&mut self) -> Result<()> {
        let ctx = crate::isl::new_context();
        for s in &mut self.statements {
            let bad = |what: &str, e: isl_rs::LibISLError| {
                ScopError::new(
                    &self.src.path,
                    Some(s.location),
                    format!("internal error: isl rejects the {what} we built: {e:?}"),
                )
            };
            let set = Set::read_from_str(&ctx, &s.domain)
                .and_then(|d| d.coalesce())
                .map_err(|e| bad("domain", e))?;
            if !set.is_empty().map_err(|e| bad("domain", e))? {
                s.domain = set.to_str().map_err(|e| bad("domain", e))?.to_string();
            }
            for a in &mut s.accesses {
                let m = Map::read_from_str(&ctx, &a.relation)
                    .and_then(|m| without_unused_literals(m, &self.constants))
                    .map_err(|e| bad("access relation", e))?;
                a.relation = m.to_str().map_err(|e| bad("access relation", e))?.to_string();
            }
        }
        Ok(())
    }

    /// The arrays the statements access, each written or not and local or
    /// not. A statement left out (it never runs) takes its references
    /// along. A member `p.a` of a struct `p` declared inside the SCoP is
    /// local to it, and `p` itself joins the arrays as a local that no
    /// statement names, so that code generation declares it.
    fn settle_arrays(&mut self) {
        let accesses = || self.statements.iter().flat_map(|s| &s.accesses);
        let accessed: HashSet<String> = accesses().map(|a| a.array.clone()).collect();
        let written: HashSet<String> = accesses()
            .filter(|a| a.kind == crate::scop::AccessKind::Write)
            .map(|a| a.array.clone())
            .collect();
        self.arrays.retain(|a| accessed.contains(&a.name));
        // `p.a`'s root is `p`, and `q[].u`'s (a member of an array of structs) `q`.
        let root = |name: &str| name.split('.').next().unwrap_or(name).trim_end_matches("[]").to_string();
        let mut roots = Vec::new();
        for a in &mut self.arrays {
            a.written = written.contains(&a.name);
            a.local = self.locals.contains_key(&root(&a.name));
            if a.local && a.is_struct_member() && !roots.contains(&root(&a.name)) {
                roots.push(root(&a.name));
            }
        }
        for r in roots {
            let decl = &self.locals[&r];
            self.arrays.push(Array {
                name: r,
                element_type: decl.ty.clone(),
                extents: decl.extents.clone(),
                written: false,
                local: true,
                linearised: false,
            });
        }
    }

    pub(super) fn finish(
        mut self,
        function: String,
        start: Location,
        span: (usize, usize),
        tree: &[Tree],
    ) -> Result<Scop> {
        self.settle_arrays();
        let prefix = self.param_prefix();
        let mut n = 0;
        for s in &mut self.statements {
            // Parameters are known only once the whole SCoP is read.
            let body = s.domain.split_once("-> ").map(|(_, b)| b.to_string()).unwrap_or_default();
            s.domain = format!("{prefix}{body}");
            for a in &mut s.accesses {
                a.id = format!("ref{n}");
                a.relation = format!("{prefix}{}", a.relation);
                n += 1;
            }
        }
        self.normalize()?;
        self.check_extents()?;
        let root = schedule_yaml(tree, &self.statements).map(|c| format!(", child: {c}")).unwrap_or_default();
        let mut rows = vec![Vec::new(); self.statements.len()];
        flat_rows(tree, &mut Vec::new(), &mut rows);
        let depth = rows.iter().map(Vec::len).max().unwrap_or(0);
        let schedule_map = self
            .statements
            .iter()
            .zip(&rows)
            .map(|(s, r)| {
                let mut r = r.clone();
                r.resize(depth, "0".into());
                format!("{}[{}] -> [{}]", s.name, s.iterators.join(", "), r.join(", "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        let mut scop = Scop {
            file: self.src.path.clone(),
            function,
            start,
            span,
            context: context(&self.params),
            params: self.params,
            arrays: self.arrays,
            statements: self.statements,
            schedule: String::new(),
            schedule_map: format!("{{ {schedule_map} }}"),
            copies: Vec::new(),
            expansions: Vec::new(),
            constants: self.constants,
            notes: self.notes,
            exit_values: Vec::new(),
            calls: Vec::new(),
            function_span: (0, 0),
            unmodelled: Vec::new(),
            detected: false,
            assumed: None,
        };
        if !self.assumptions.is_empty() {
            let known = scop.context.clone();
            let internal = |e: isl_rs::LibISLError| {
                ScopError::new(&scop.file, None, format!("internal error: isl rejects an assumption: {e:?}"))
            };
            let ctx = crate::isl::new_context();
            let mut context = Set::read_from_str(&ctx, &known).map_err(internal)?;
            for (set, _) in &self.assumptions {
                context =
                    context.intersect(Set::read_from_str(&ctx, set).map_err(internal)?).map_err(internal)?;
            }
            scop.context = context.coalesce().map_err(internal)?.to_str().map_err(internal)?.to_string();
            let why = self.assumptions.into_iter().map(|(_, why)| why).collect();
            scop.assumed = Some(crate::scop::Assumed { known, why });
        }
        scop.schedule = format!("{{ domain: \"{}\"{root} }}", scop.domain());
        Ok(scop)
    }
}

/// The lexicographically first point of a non-empty set with parameters,
/// named (`" (first at n = 1, i = 0)"`): the parameters are moved in front
/// of the set's dimensions; `names` are theirs, in that order. Empty where
/// isl finds no first point (unbounded below).
pub(super) fn first_point(set: Set, names: &[String]) -> String {
    match first_values(set) {
        Some(values) if values.len() == names.len() && !names.is_empty() => {
            let pairs: Vec<String> = names.iter().zip(values).map(|(n, v)| format!("{n} = {v}")).collect();
            format!(" (first at {})", pairs.join(", "))
        }
        _ => String::new(),
    }
}

/// The values of the lexicographically first point of `set`, parameters
/// first; `None` where there is none or isl fails.
pub(super) fn first_values(set: Set) -> Option<Vec<String>> {
    let point = || -> std::result::Result<String, isl_rs::LibISLError> {
        let n = set.dim(isl_rs::DimType::Param)?;
        let set = set.move_dims(isl_rs::DimType::Set, 0, isl_rs::DimType::Param, 0, n as u32)?;
        Ok(set.lexmin()?.to_str()?.to_string())
    };
    parse_point(&point().ok()?)
}

/// `{ [1, j = 0] }` → `["1", "0"]`; `None` unless the text is one integer point.
fn parse_point(text: &str) -> Option<Vec<String>> {
    let inner = text.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let inner = inner.split_once("->").map(|(_, r)| r).unwrap_or(inner).trim();
    let inner = inner.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
    let inner = inner.strip_prefix('[')?.strip_suffix(']')?;
    let values: Vec<String> =
        inner.split(',').map(|v| v.rsplit('=').next().unwrap_or(v).trim().to_string()).collect();
    values.iter().all(|v| v.parse::<i64>().is_ok()).then_some(values)
}

/// Parameters are sizes: the model assumes them non-negative, as pet and Pluto do.
pub(super) fn context(params: &[String]) -> String {
    let cond: Vec<String> = params.iter().map(|p| format!("{p} >= 0")).collect();
    let cond = if cond.is_empty() { String::new() } else { format!(" {}", cond.join(" and ")) };
    format!("[{}] -> {{ :{cond} }}", params.join(", "))
}

impl Walk<'_> {
    /// [`context`] with the literals modelled as parameters (`lift`) at
    /// their values: what holds when the program runs, whatever the
    /// schedule assumes (a statement that never runs, an access out of
    /// bounds, are decided under it).
    pub(super) fn pinned_context(&self) -> String {
        let cond = self.size_conditions();
        let cond = if cond.is_empty() { String::new() } else { format!(" {}", cond.join(" and ")) };
        format!("[{}] -> {{ :{cond} }}", self.params.join(", "))
    }

    /// The parameters non-negative and the literals modelled as parameters
    /// at their values, as isl constraints.
    pub(super) fn size_conditions(&self) -> Vec<String> {
        let mut conds: Vec<String> = self.params.iter().map(|p| format!("{p} >= 0")).collect();
        conds.extend(
            self.constants.iter().filter(|(p, _)| self.params.contains(p)).map(|(p, v)| format!("{p} = {v}")),
        );
        conds
    }
}

/// `m` without the literals modelled as parameters that it does not use:
/// each relation would otherwise name them all, and a statement of
/// thousands of distinct constant subscripts (hundreds of lifted literals)
/// grows quadratically in text and in isl's work.
fn without_unused_literals(
    mut m: Map,
    constants: &[(String, i64)],
) -> std::result::Result<Map, isl_rs::LibISLError> {
    for pos in (0..m.dim(isl_rs::DimType::Param)? as u32).rev() {
        let name = m.get_dim_name(isl_rs::DimType::Param, pos)?;
        let lifted = constants.iter().any(|(p, _)| p == name);
        if lifted && !m.involves_dims(isl_rs::DimType::Param, pos, 1)? {
            m = m.project_out(isl_rs::DimType::Param, pos, 1)?;
        }
    }
    Ok(m)
}

fn tree_statements(tree: &[Tree], out: &mut Vec<usize>) {
    for t in tree {
        match t {
            Tree::Stmt(i) => out.push(*i),
            Tree::Loop { body, .. } => tree_statements(body, out),
        }
    }
}

fn tuple(s: &Statement) -> String {
    format!("{}[{}]", s.name, s.iterators.join(", "))
}

/// The isl YAML of a list of siblings, `None` for a lone statement (a leaf).
fn schedule_yaml(tree: &[Tree], stmts: &[Statement]) -> Option<String> {
    if tree.len() == 1 {
        return node_yaml(&tree[0], stmts);
    }
    let parts: Vec<String> = tree
        .iter()
        .map(|t| {
            let mut ids = Vec::new();
            tree_statements(std::slice::from_ref(t), &mut ids);
            let filter = ids.iter().map(|&i| tuple(&stmts[i])).collect::<Vec<_>>().join("; ");
            match node_yaml(t, stmts) {
                Some(c) => format!("{{ filter: \"{{ {filter} }}\", child: {c} }}"),
                None => format!("{{ filter: \"{{ {filter} }}\" }}"),
            }
        })
        .collect();
    Some(format!("{{ sequence: [ {} ] }}", parts.join(", ")))
}

fn node_yaml(t: &Tree, stmts: &[Statement]) -> Option<String> {
    match t {
        Tree::Stmt(_) => None,
        Tree::Loop { iter, sign, body } => {
            let mut ids = Vec::new();
            tree_statements(body, &mut ids);
            let value = if *sign < 0 { format!("-{iter}") } else { iter.clone() };
            let parts: Vec<String> =
                ids.iter().map(|&i| format!("{} -> [({value})]", tuple(&stmts[i]))).collect();
            let band = format!("schedule: \"[{{ {} }}]\"", parts.join("; "));
            Some(match schedule_yaml(body, stmts) {
                Some(c) => format!("{{ {band}, child: {c} }}"),
                None => format!("{{ {band} }}"),
            })
        }
    }
}

/// `2d+1` rows: sibling position, then loop value, at each depth.
fn flat_rows(tree: &[Tree], prefix: &mut Vec<String>, rows: &mut [Vec<String>]) {
    for (pos, t) in tree.iter().enumerate() {
        prefix.push(pos.to_string());
        match t {
            Tree::Stmt(i) => rows[*i] = prefix.clone(),
            Tree::Loop { iter, sign, body } => {
                prefix.push(if *sign < 0 { format!("-{iter}") } else { iter.clone() });
                flat_rows(body, prefix, rows);
                prefix.pop();
            }
        }
        prefix.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_point_names_parameters_and_dimensions() {
        let ctx = crate::isl::new_context();
        let set = |t: &str| Set::read_from_str(&ctx, t).unwrap();
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            first_point(set("[] -> { [i] : i >= 0 and i < 50 and i - 1 < 0 }"), &names(&["i"])),
            " (first at i = 0)"
        );
        assert_eq!(
            first_point(
                set("[n] -> { [i, j] : 0 <= i < n and j = i - 1 and n >= 3 }"),
                &names(&["n", "i", "j"])
            ),
            " (first at n = 3, i = 0, j = -1)"
        );
        assert_eq!(first_point(set("{ [i] : i < 0 }"), &names(&["i"])), "");
    }
}
