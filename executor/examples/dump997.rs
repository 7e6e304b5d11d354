// Temporary debugging aid (not committed): the final schedule tree of one point.
fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let tree = std::fs::read_to_string(std::env::args().nth(2).unwrap()).unwrap();
    let (source, scops) = model::scop::extract(&path, &Default::default()).unwrap();
    let scop = &scops[0];
    let deps = model::deps::analyze(scop).unwrap();
    let opts = codegen::CodegenOptions::for_point(Some(vec![4]), 1, None);
    let v = codegen::generate(&source, scop, &deps, tree.trim(), &opts).unwrap();
    println!("{}", v.schedule);
    println!("CONTEXT {}", scop.context);
}
