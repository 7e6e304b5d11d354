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
                let m = Map::read_from_str(&ctx, &a.relation).map_err(|e| bad("access relation", e))?;
                a.relation = m.to_str().map_err(|e| bad("access relation", e))?.to_string();
            }
        }
        Ok(())
    }

    pub(super) fn finish(
        mut self,
        function: String,
        start: Location,
        span: (usize, usize),
        tree: &[Tree],
    ) -> Result<Scop> {
        for a in &mut self.arrays {
            a.local = self.locals.contains_key(&a.name);
        }
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
            constants: self.constants,
        };
        scop.schedule = format!("{{ domain: \"{}\"{root} }}", scop.domain());
        Ok(scop)
    }
}

/// Parameters are sizes: the model assumes them non-negative, as pet and Pluto do.
fn context(params: &[String]) -> String {
    let cond: Vec<String> = params.iter().map(|p| format!("{p} >= 0")).collect();
    let cond = if cond.is_empty() { String::new() } else { format!(" {}", cond.join(" and ")) };
    format!("[{}] -> {{ :{cond} }}", params.join(", "))
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
