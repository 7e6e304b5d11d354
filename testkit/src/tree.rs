//! Schedule trees read through isl, for assertions on their structure instead of on
//! their YAML text: each band with its depth, members, flags and statements, and the
//! marks code generation puts in.

use isl_rs::{Schedule, ScheduleNode, ScheduleNodeType};

/// One band node of a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    /// Schedule dimensions above it.
    pub depth: usize,
    pub permutable: bool,
    /// One flag per member.
    pub coincident: Vec<bool>,
    /// The statements it schedules, sorted by name.
    pub statements: Vec<String>,
    /// Whether it carries an `isolate` AST option (full tiles apart).
    pub isolated: bool,
}

/// What a tree holds, in depth-first order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    pub bands: Vec<Band>,
    /// The names of its mark nodes (`polytune_parallel_1`).
    pub marks: Vec<String>,
}

impl Tree {
    /// The tree of isl's YAML text `text`; panics naming the text when isl refuses it.
    pub fn read(text: &str) -> Tree {
        let ctx = model::isl::new_context();
        let schedule = Schedule::read_from_str(&ctx, text).unwrap_or_else(|e| panic!("{e:?}: {text}"));
        let mut tree = Tree::default();
        walk(&schedule.get_root().unwrap(), &mut tree);
        tree
    }

    /// How many bands tiling acts on (permutable, two members or more) and how many
    /// bands have a parallel loop (a coincident member).
    pub fn flags(&self) -> (usize, usize) {
        let permutable = self.bands.iter().filter(|b| b.permutable && b.coincident.len() > 1).count();
        (permutable, self.bands.iter().filter(|b| b.coincident.contains(&true)).count())
    }

    pub fn has_mark(&self, name: &str) -> bool {
        self.marks.iter().any(|m| m == name)
    }
}

fn walk(node: &ScheduleNode, tree: &mut Tree) {
    match node.get_type().unwrap() {
        ScheduleNodeType::Band => {
            let n = node.band_n_member().unwrap();
            let list = node.get_domain().unwrap().get_set_list().unwrap();
            let mut statements: Vec<String> = (0..list.size().unwrap())
                .map(|i| list.get_at(i).unwrap().get_tuple_name().unwrap().to_string())
                .collect();
            statements.sort();
            let options = node.band_get_ast_build_options().unwrap().to_str().unwrap().to_string();
            tree.bands.push(Band {
                depth: node.get_schedule_depth().unwrap() as usize,
                permutable: node.band_get_permutable().unwrap(),
                coincident: (0..n).map(|j| node.band_member_get_coincident(j).unwrap()).collect(),
                statements,
                isolated: options.contains("isolate"),
            });
        }
        ScheduleNodeType::Mark => {
            tree.marks.push(node.mark_get_id().unwrap().to_str().unwrap().to_string());
        }
        _ => {}
    }
    for i in 0..node.n_children().unwrap() {
        walk(&node.get_child(i).unwrap(), tree);
    }
}
