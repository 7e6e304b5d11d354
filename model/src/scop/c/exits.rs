//! Loop iterators read after their loop, modelled as pet models them: after
//! `for (i = lb; i < ub; i++)` the iterator holds its exit value `max(lb,
//! ub)` (the first value that fails the condition, on the step's lattice).
//! Later reads in the SCoP use that affine value, and a region whose
//! program may read the iterator after it assigns it there
//! ([`Scop::exit_values`]).

use super::*;

/// What a loop iterator holds where no loop binds it.
#[derive(Clone)]
pub(super) struct Exit {
    /// Tells two states apart (an `if`'s branches, a loop's iterations).
    id: usize,
    /// Where the loop that set it starts.
    at: usize,
    state: State,
}

impl Exit {
    /// Set by a loop that declares its iterator: no variable outside it changes.
    fn declared(&self) -> bool {
        matches!(self.state, State::Unknown(Why::Declared))
    }
}

#[derive(Clone)]
enum State {
    /// A formula for the exit value, to be checked against isl's exact
    /// one: the first failure of the condition (`failures`, a map from the
    /// enclosing iterators to the iterator, its lexmin for a loop that
    /// counts up) must equal `candidate`.
    Pending {
        isl: String,
        c: String,
        failures: String,
        candidate: String,
        up: bool,
    },
    /// The exit value as an isl expression of the enclosing iterators and
    /// the parameters, and in C (cast to the iterator's type).
    Exact {
        isl: String,
        c: String,
    },
    Unknown(Why),
}

/// Why the value of an iterator is not modelled where it is read.
#[derive(Clone)]
enum Why {
    /// In the body of an enclosing loop, before the iterator's own loop:
    /// what the previous iteration left.
    Previous {
        outer: String,
        outer_at: usize,
    },
    /// After an enclosing loop: what the last iteration's loop left.
    Nested {
        outer: String,
        outer_at: usize,
    },
    /// After an `if` around the loop: what the branch taken left.
    Conditional {
        if_at: usize,
    },
    Inexact(String),
    /// The loop declared an iterator of its own, gone after it.
    Declared,
}

/// What `for_loop` knows of a loop once its body is read.
pub(super) struct LoopHead<'t> {
    pub(super) node: Node<'t>,
    pub(super) iter: String,
    pub(super) isl: String,
    pub(super) lb: Node<'t>,
    pub(super) lb_isl: String,
    pub(super) cond: Node<'t>,
    pub(super) cond_isl: String,
    pub(super) step: i64,
    pub(super) declared: bool,
}

/// A snapshot of the exit values, to compare after a loop body or a branch.
pub(super) type Exits = HashMap<String, Exit>;

impl Walk<'_> {
    fn line(&self, byte: usize) -> u32 {
        self.src.location(byte).map(|l| l.line).unwrap_or(0)
    }

    fn set_exit(&mut self, name: &str, at: usize, state: State) {
        self.exit_count += 1;
        self.exits.insert(name.to_string(), Exit { id: self.exit_count, at, state });
    }

    /// Records the exit value of the loop `h` whose body was just read.
    pub(super) fn record_exit(&mut self, h: &LoopHead) {
        let at = h.node.start_byte();
        if h.declared {
            // The loop's own variable: a variable of that name outside it
            // keeps its state.
            if !self.exits.contains_key(&h.iter) {
                self.set_exit(&h.iter, at, State::Unknown(Why::Declared));
            }
            return;
        }
        let state = match self.exit_formula(h) {
            Ok(state) => state,
            Err(why) => State::Unknown(Why::Inexact(why)),
        };
        self.set_exit(&h.iter, at, state);
    }

    /// Before a loop's body: the iterators of the loops inside it hold,
    /// from the second iteration on, what the previous one left.
    pub(super) fn enter_loop_body(&mut self, body: Node, outer: &str, outer_at: usize) -> Exits {
        let snapshot = self.exits.clone();
        let mut inner = Vec::new();
        self.inner_loops(body, &mut inner);
        for (name, at) in inner {
            let why = Why::Previous { outer: outer.to_string(), outer_at };
            self.set_exit(&name, at, State::Unknown(why));
        }
        snapshot
    }

    fn inner_loops(&self, node: Node, out: &mut Vec<(String, usize)>) {
        if node.kind() == "for_statement" {
            let init = node.child_by_field_name("initializer").filter(|i| i.kind() != "declaration");
            if let Some(name) = init.and_then(|i| self.init_target(i)) {
                out.push((name, node.start_byte()));
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for c in children {
            self.inner_loops(c, out);
        }
    }

    /// After a loop's body: what its loops set depends on the last iteration.
    pub(super) fn leave_loop_body(&mut self, before: Exits, outer: &str, outer_at: usize) {
        let changed: Vec<(String, usize)> = self
            .exits
            .iter()
            .filter(|(n, e)| before.get(*n).map(|b| b.id) != Some(e.id) && !e.declared())
            .map(|(n, e)| (n.clone(), e.at))
            .collect();
        for (name, at) in changed {
            let why = Why::Nested { outer: outer.to_string(), outer_at };
            self.set_exit(&name, at, State::Unknown(why));
        }
    }

    /// After an `if`: what either branch's loops set depends on the branch.
    pub(super) fn merge_branches(&mut self, before: &Exits, then: Exits, if_at: usize) {
        let names: HashSet<String> = then.keys().chain(self.exits.keys()).cloned().collect();
        for name in names {
            let (a, b) = (then.get(&name), self.exits.get(&name));
            if a.map(|e| e.id) == b.map(|e| e.id) || [a, b].into_iter().flatten().all(Exit::declared) {
                continue;
            }
            let changed =
                [a, b].into_iter().flatten().find(|e| before.get(&name).map(|x| x.id) != Some(e.id));
            let at = changed.or(a).or(b).map(|e| e.at).unwrap_or(if_at);
            self.set_exit(&name, at, State::Unknown(Why::Conditional { if_at }));
        }
    }

    /// The exit value's formula (pet's `max(lb, ub)`), for a condition that
    /// bounds the iterator alone, with the sets that check it.
    fn exit_formula(&mut self, h: &LoopHead) -> std::result::Result<State, String> {
        let (up, s) = (h.step > 0, h.step.abs());
        let mut bounds = Vec::new();
        if !self.bounds_of(h.cond, &h.iter, up, &mut bounds) {
            return Err(format!(
                "its condition `{}` is not a conjunction of bounds on `{}` alone",
                self.text(h.cond),
                h.iter
            ));
        }
        let (mut isl, mut c, mut values) = (Vec::new(), Vec::new(), Vec::new());
        for (e, adjust) in bounds {
            let a = self.affine(e).map_err(|e| e.reason)?;
            let plus = match adjust {
                0 => String::new(),
                d => format!(" + ({d})"),
            };
            isl.push(format!("({a}){plus}"));
            c.push(format!("(long)({}){plus}", self.c_text(e)));
            values.push(self.constant(e).map(|v| v as i128 + adjust as i128));
        }
        let (pick, cmp) = if up { ("min", "<") } else { ("max", ">") };
        let bound = isl.into_iter().reduce(|a, b| format!("{pick}({a}, {b})")).unwrap_or_default();
        let bound_c = c.into_iter().reduce(|a, b| format!("({a} {cmp} {b} ? {a} : {b})")).unwrap_or_default();
        let lb = &h.lb_isl;
        let exit = match (up, s) {
            (true, 1) => format!("max({lb}, {bound})"),
            (true, s) => format!("max({lb}, ({lb}) + {s} * ceil((({bound}) - ({lb})) / {s}))"),
            (false, 1) => format!("min({lb}, {bound})"),
            (false, s) => format!("min({lb}, ({lb}) - {s} * ceil((({lb}) - ({bound})) / {s}))"),
        };
        // In C: the same in `long`, folded where every term is a literal.
        let lb_value = self.constant(h.lb).map(i128::from);
        let folded = values.into_iter().collect::<Option<Vec<i128>>>().zip(lb_value).map(|(v, lb)| {
            let s = s as i128;
            match up {
                true => match v.into_iter().min().unwrap_or(lb) {
                    b if b > lb => lb + s * ((b - lb + s - 1) / s),
                    _ => lb,
                },
                false => match v.into_iter().max().unwrap_or(lb) {
                    b if b < lb => lb - s * ((lb - b + s - 1) / s),
                    _ => lb,
                },
            }
        });
        let lbc = format!("(long)({})", self.c_text(h.lb));
        let b = &bound_c;
        let value = match (folded, up, s) {
            (Some(v), _, _) => v.to_string(),
            (None, true, 1) => format!("({b} > {lbc} ? {b} : {lbc})"),
            (None, true, s) => {
                format!("({b} > {lbc} ? {lbc} + {s} * (({b} - {lbc} + {s} - 1) / {s}) : {lbc})")
            }
            (None, false, 1) => format!("({b} < {lbc} ? {b} : {lbc})"),
            (None, false, s) => {
                format!("({b} < {lbc} ? {lbc} - {s} * (({lbc} - {b} + {s} - 1) / {s}) : {lbc})")
            }
        };
        let ty = self.decls.get(&h.iter).map(|d| d.ty.clone()).unwrap_or_else(|| "long".into());
        let c = format!("(({ty}) {value})");
        // The first value on the lattice past the start that fails the condition.
        let its: Vec<String> = self.loops.iter().map(|l| l.isl.clone()).collect();
        let mut conds = self.size_conditions();
        conds.extend(self.conds.iter().map(|c| format!("({c})")));
        let i = &h.isl;
        let head = format!("{}{{ [{}] -> [{i}] : ", self.param_prefix(), its.join(", "));
        let mut fail = conds.clone();
        fail.push(format!("{i} {} {lb}", if up { ">=" } else { "<=" }));
        if s > 1 {
            fail.push(format!("({i} - ({lb})) mod {s} = 0"));
        }
        fail.push(format!("not ({})", h.cond_isl));
        let mut cand = conds;
        cand.push(format!("{i} = {exit}"));
        Ok(State::Pending {
            isl: exit,
            c,
            failures: format!("{head}{} }}", fail.join(" and ")),
            candidate: format!("{head}{} }}", cand.join(" and ")),
            up,
        })
    }

    /// The exclusive bounds `(e, adjust)` (`i < e + adjust` counting up, `i
    /// > e + adjust` down) of a condition that is a conjunction of
    /// comparisons of the iterator alone; `false` otherwise.
    fn bounds_of<'t>(&self, cond: Node<'t>, iter: &str, up: bool, out: &mut Vec<(Node<'t>, i64)>) -> bool {
        let n = strip_parens(cond);
        let (Some(l), Some(r), Some(op)) = (
            n.child_by_field_name("left"),
            n.child_by_field_name("right"),
            n.child_by_field_name("operator").map(|o| self.text(o)),
        ) else {
            return false;
        };
        if n.kind() != "binary_expression" {
            return false;
        }
        if op == "&&" {
            return self.bounds_of(l, iter, up, out) && self.bounds_of(r, iter, up, out);
        }
        let (l, r) = (strip_parens(l), strip_parens(r));
        let is_iter = |n: Node| n.kind() == "identifier" && self.text(n) == iter;
        let flip = |op: &str| {
            match op {
                "<" => ">",
                "<=" => ">=",
                ">" => "<",
                ">=" => "<=",
                other => other,
            }
            .to_string()
        };
        let (e, rel) = if is_iter(l) && !self.mentions(r, iter) {
            (r, op.to_string())
        } else if is_iter(r) && !self.mentions(l, iter) {
            (l, flip(op))
        } else {
            return false;
        };
        let adjust = match (up, rel.as_str()) {
            (true, "<") | (false, ">") => 0,
            (true, "<=") => 1,
            (false, ">=") => -1,
            _ => return false,
        };
        out.push((e, adjust));
        true
    }

    fn mentions(&self, node: Node, name: &str) -> bool {
        if node.kind() == "identifier" && self.text(node) == name {
            return true;
        }
        let mut cursor = node.walk();
        let found = node.named_children(&mut cursor).any(|c| self.mentions(c, name));
        found
    }

    /// Checks a pending formula with isl (once).
    fn settle(&mut self, name: &str) {
        let Some(exit) = self.exits.get_mut(name) else { return };
        let State::Pending { isl, c, failures, candidate, up } = &exit.state else { return };
        let exact = || -> std::result::Result<bool, isl_rs::LibISLError> {
            let ctx = crate::isl::new_context();
            let f = Map::read_from_str(&ctx, failures)?;
            let first = if *up { f.lexmin()? } else { f.lexmax()? };
            first.is_equal(&Map::read_from_str(&ctx, candidate)?)
        };
        exit.state = match exact() {
            Ok(true) => State::Exact { isl: isl.clone(), c: c.clone() },
            Ok(false) => State::Unknown(Why::Inexact(format!(
                "`{isl}` is not the first value that fails its condition (isl finds another)"
            ))),
            Err(e) => State::Unknown(Why::Inexact(format!("isl cannot check `{isl}`: {e:?}"))),
        };
    }

    /// The value of the loop iterator `node` read where no loop binds it,
    /// in isl syntax; its C spelling replaces it in the statement's text.
    pub(super) fn exit_value(&mut self, node: Node) -> Result<String> {
        let name = self.text(node).to_string();
        self.settle(&name);
        let Some(exit) = self.exits.get(&name) else {
            return Err(self.err(
                node,
                format!("loop iterator `{name}` is read before any loop over it has run in the SCoP: its value on entry is not modelled (copy it to another variable before `#pragma scop`)"),
            ));
        };
        let line = self.line(exit.at);
        let why = match &exit.state {
            State::Exact { isl, c } => {
                let isl = format!("({isl})");
                self.rewrites.insert((node.start_byte(), node.end_byte()), c.clone());
                return Ok(isl);
            }
            State::Unknown(why) => why.clone(),
            State::Pending { .. } => Why::Inexact("it was not checked".into()),
        };
        let reason = match why {
            Why::Previous { outer, outer_at } => format!(
                "loop iterator `{name}` is read in the body of the loop over `{outer}` (line {}) before its own loop (line {line}): there it holds what the previous iteration left, which polytune does not model",
                self.line(outer_at)
            ),
            Why::Nested { outer, outer_at } => format!(
                "loop iterator `{name}` is read after the loop over `{outer}` (line {}) around its own loop (line {line}): there it holds what the last iteration's loop left, which polytune does not model (compute the value from the bounds instead)",
                self.line(outer_at)
            ),
            Why::Conditional { if_at } => format!(
                "loop iterator `{name}` is read after the `if` (line {}) around its loop (line {line}): its value depends on the branch taken, which polytune does not model",
                self.line(if_at)
            ),
            Why::Inexact(why) => format!(
                "loop iterator `{name}` is read after its loop (line {line}), whose exit value polytune cannot compute exactly: {why}"
            ),
            Why::Declared => format!(
                "`{name}` is read after the loop (line {line}) that declares an iterator `{name}` of its own: rename one of them"
            ),
        };
        Err(self.err(node, reason))
    }

    /// The C text of `node` with the rewrites inside it applied.
    pub(super) fn c_text(&self, node: Node) -> String {
        let (start, end) = (node.start_byte(), node.end_byte());
        let mut inside: Vec<(&Span, &String)> =
            self.rewrites.iter().filter(|((a, b), _)| *a >= start && *b <= end).collect();
        inside.sort_by_key(|((a, b), _)| (*a, std::cmp::Reverse(*b)));
        let text = &self.src.parse_text;
        let mut out = String::new();
        let mut at = start;
        for ((a, b), with) in inside {
            if *a < at {
                continue; // inside a rewrite already applied
            }
            out.push_str(&text[at..*a]);
            out.push_str(with);
            at = *b;
        }
        out.push_str(&text[at..end]);
        out
    }

    /// The iterators the region leaves with their exit value, for the
    /// program after it: those it assigns that are not its own locals and
    /// that the program may read after it.
    /// An iterator whose value there is not modelled is refused where the
    /// program may read it.
    pub(super) fn exit_values(&mut self, pragma: Node, function: Node, span: Span) -> Result<Vec<ExitValue>> {
        let mut names: Vec<String> = self.exits.keys().cloned().collect();
        names.sort();
        let mut out = Vec::new();
        for name in names {
            if self.locals.contains_key(&name) {
                continue;
            }
            self.settle(&name);
            let exit = self.exits[&name].clone();
            let line = self.line(exit.at);
            let why = match exit.state {
                // Only where the program may read it: elsewhere the
                // assignment would change every program for nothing.
                State::Exact { c, .. } => {
                    if self.read_after(pragma, function, span, &name).is_some() {
                        let ty = self.decls.get(&name).map_or_else(|| "int".to_string(), |d| d.ty.clone());
                        out.push(ExitValue { variable: name, value: c, ty });
                    }
                    continue;
                }
                State::Unknown(Why::Declared) => continue,
                State::Unknown(why) => why,
                State::Pending { .. } => Why::Inexact("it was not checked".into()),
            };
            let Some(later) = self.read_after(pragma, function, span, &name) else { continue };
            let reason = match why {
                Why::Nested { outer, outer_at } | Why::Previous { outer, outer_at } => format!(
                    "its loop (line {line}) is nested in the loop over `{outer}` (line {}), and what the last iteration's loop leaves is not modelled",
                    self.line(outer_at)
                ),
                Why::Conditional { if_at } => format!(
                    "its loop (line {line}) runs under the `if` on line {}, and what the branch taken leaves is not modelled",
                    self.line(if_at)
                ),
                Why::Inexact(why) => {
                    format!("the exit value of its loop (line {line}) cannot be computed exactly: {why}")
                }
                Why::Declared => continue,
            };
            return Err(ScopError::new(
                &self.src.path,
                self.src.location(exit.at),
                format!("loop iterator `{name}` keeps the value its loops leave after the SCoP, and the program may read it there ({later}): {reason}"),
            ));
        }
        Ok(out)
    }

    /// Where the program may read `name` after the region, in words; `None`
    /// where its first use after it is a plain assignment that every path
    /// runs, or there is none.
    fn read_after(&self, pragma: Node, function: Node, span: Span, name: &str) -> Option<String> {
        if !decls::names_in_scope(self.src, function, span.0).contains(name) {
            return Some(format!("`{name}` is not a local of `{}`", self.function_name(function)));
        }
        let body = function.child_by_field_name("body")?;
        // A loop around the region runs it again: any use in the loop may
        // read what the region left.
        let mut start = pragma;
        let mut node = pragma.parent();
        let mut outermost: Option<Node> = None;
        while let Some(n) = node {
            if n.id() == body.id() {
                break;
            }
            if matches!(n.kind(), "for_statement" | "while_statement" | "do_statement") {
                outermost = Some(n);
            }
            node = n.parent();
        }
        let mut after = span.1;
        if let Some(l) = outermost {
            if let Some(use_) = self.first_use(l, name, Some(span)) {
                return Some(format!("line {}, in the loop around the SCoP", self.line(use_.start_byte())));
            }
            (start, after) = (l, l.end_byte());
        }
        let mut container = start.parent()?;
        loop {
            let sequence = container.kind() == "compound_statement";
            let mut cursor = container.walk();
            let children: Vec<Node> = container.named_children(&mut cursor).collect();
            for child in children.into_iter().filter(|c| c.start_byte() >= after) {
                if sequence && self.declares(child, name) {
                    break; // the rest of the block sees another variable
                }
                let Some(use_) = self.first_use(child, name, None) else { continue };
                if sequence && self.kills(child, use_, name) {
                    return None;
                }
                if self.assigned_first(child, use_, name) {
                    continue;
                }
                return Some(format!("line {}", self.line(use_.start_byte())));
            }
            if container.id() == body.id() {
                return None;
            }
            after = container.end_byte();
            container = container.parent()?;
        }
    }

    fn function_name(&self, function: Node) -> String {
        function
            .child_by_field_name("declarator")
            .and_then(|d| find_kind(d, "identifier"))
            .map(|n| self.text(n).to_string())
            .unwrap_or_default()
    }

    /// Whether the declaration `node` declares `name`.
    fn declares(&self, node: Node, name: &str) -> bool {
        if node.kind() != "declaration" {
            return false;
        }
        let mut cursor = node.walk();
        let found = node
            .children_by_field_name("declarator", &mut cursor)
            .any(|d| find_kind(d, "identifier").is_some_and(|i| self.text(i) == name));
        found
    }

    /// The first use of `name` in `node` in the order of the text (outside
    /// `skip`), past the scopes that declare a `name` of their own.
    fn first_use<'t>(&self, node: Node<'t>, name: &str, skip: Option<Span>) -> Option<Node<'t>> {
        if skip.is_some_and(|(a, b)| node.start_byte() >= a && node.end_byte() <= b) {
            return None;
        }
        if node.kind() == "identifier" && self.text(node) == name {
            return Some(node);
        }
        if node.kind() == "for_statement"
            && node.child_by_field_name("initializer").is_some_and(|i| self.declares(i, name))
        {
            return None;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
        for c in children {
            if node.kind() == "compound_statement" && self.declares(c, name) {
                return None;
            }
            if let Some(u) = self.first_use(c, name, skip) {
                return Some(u);
            }
        }
        None
    }

    /// Whether the statement `stmt`, whose first use of `name` is `use_`,
    /// assigns it a value that does not read it (`i = 0;`, `for (i = 0; ...)`).
    /// Whether `stmt` reads `name` only after a loop of its own assigns it:
    /// `use_` (the first use) is the left of `name = e` in the initialiser
    /// of a `for` nested in `stmt`, and `stmt` mentions `name` nowhere
    /// outside that loop. Where the loop runs, what the region left is
    /// overwritten before it is read; where it does not, `stmt` leaves it
    /// to the statements after it.
    fn assigned_first(&self, stmt: Node, use_: Node, name: &str) -> bool {
        let Some(a) = use_.parent().filter(|a| a.kind() == "assignment_expression") else { return false };
        let Some(l) = a.parent().filter(|l| l.kind() == "for_statement") else { return false };
        let initialises = l.child_by_field_name("initializer").is_some_and(|i| i.id() == a.id());
        let plain = a.child_by_field_name("operator").is_some_and(|o| self.text(o) == "=");
        let left = a.child_by_field_name("left").is_some_and(|x| x.id() == use_.id());
        let pure = a.child_by_field_name("right").is_some_and(|r| !self.mentions(r, name));
        initialises
            && plain
            && left
            && pure
            && self.first_use(stmt, name, Some((l.start_byte(), l.end_byte()))).is_none()
    }

    fn kills(&self, stmt: Node, use_: Node, name: &str) -> bool {
        let assignment = match stmt.kind() {
            "expression_statement" => stmt.named_child(0),
            "for_statement" => stmt.child_by_field_name("initializer"),
            _ => None,
        };
        let Some(a) = assignment.filter(|a| a.kind() == "assignment_expression") else { return false };
        let plain = a.child_by_field_name("operator").is_some_and(|o| self.text(o) == "=");
        let left = a.child_by_field_name("left").is_some_and(|l| l.id() == use_.id());
        plain && left && a.child_by_field_name("right").is_some_and(|r| !self.mentions(r, name))
    }
}
