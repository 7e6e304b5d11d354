//! Builds through the cache: success, compile errors as data, cache hits, parallel jobs.

use executor::build::{BuildError, BuildOutcome, Builder, Compiler};
use std::path::PathBuf;

/// A fresh cache directory per test, so tests do not see each other's hits.
fn cache_dir(test: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("polytune-build-test-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn program(value: i32) -> String {
    format!(
        "#include <stdio.h>\n\
         int main(void) {{\n\
           void polytune_rt_start(void);\n\
           void polytune_rt_stop(void);\n\
           volatile int x = {value};\n\
           polytune_rt_start();\n\
           x = x * 2;\n\
           polytune_rt_stop();\n\
           printf(\"%d\\n\", x);\n\
           return 0;\n\
         }}\n"
    )
}

#[test]
fn small_program_builds_and_runs() {
    let dir = cache_dir("small");
    let b = Builder::new(Compiler::default(), &dir).unwrap();
    let out = b.build(&program(21));
    let BuildOutcome::Built { binary, cached, key, compile_s } = out else { panic!("{out:?}") };
    assert!(!cached && compile_s > 0.0);
    assert_eq!(b.build(&program(21)).compile_s(), 0.0, "a cache hit compiles nothing");
    assert_eq!(binary.file_name().unwrap().to_string_lossy(), key);
    let run = std::process::Command::new(&binary).output().unwrap();
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "42");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compile_error_is_a_result_with_the_compiler_message() {
    let dir = cache_dir("broken");
    let b = Builder::new(Compiler::default(), &dir).unwrap();
    let out = b.build("int main(void) { return undeclared_thing; }\n");
    let BuildOutcome::Failed { message } = out else { panic!("{out:?}") };
    assert!(message.contains("undeclared_thing"), "{message}");
    assert!(message.contains("error"), "{message}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn second_build_is_a_cache_hit() {
    let dir = cache_dir("hit");
    let b = Builder::new(Compiler::default(), &dir).unwrap();
    let first = b.build(&program(1));
    let BuildOutcome::Built { binary, cached: false, .. } = &first else { panic!("{first:?}") };
    let mtime = std::fs::metadata(binary).unwrap().modified().unwrap();
    // A second builder on the same cache (as another process would be) hits too.
    let b2 = Builder::new(Compiler::default(), &dir).unwrap();
    for builder in [&b, &b2] {
        let again = builder.build(&program(1));
        let BuildOutcome::Built { binary: binary2, cached, .. } = &again else { panic!("{again:?}") };
        assert!(cached, "expected a cache hit");
        assert_eq!(binary, binary2);
    }
    assert_eq!(std::fs::metadata(binary).unwrap().modified().unwrap(), mtime, "binary was rewritten");
    // Other flags are another key.
    let o1 = Builder::new(Compiler::new("gcc", ["-O1"]), &dir).unwrap();
    assert!(matches!(o1.build(&program(1)), BuildOutcome::Built { cached: false, .. }));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn four_sources_on_two_jobs() {
    let dir = cache_dir("parallel");
    let b = Builder::new(Compiler::default(), &dir).unwrap();
    let sources: Vec<String> = (0..4).map(program).collect();
    let outs = b.build_all(&sources, 2).unwrap();
    assert_eq!(outs.len(), 4);
    for (i, out) in outs.iter().enumerate() {
        let BuildOutcome::Built { binary, cached: false, .. } = out else { panic!("{out:?}") };
        let run = std::process::Command::new(binary).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), (2 * i).to_string());
    }
    // Same sources again, mixed with a broken one: hits, and the failure stays in place.
    let mut mixed: Vec<&str> = sources.iter().map(String::as_str).collect();
    mixed.insert(2, "this is not C");
    let outs = b.build_all(&mixed, 2).unwrap();
    assert!(matches!(outs[2], BuildOutcome::Failed { .. }));
    assert!(outs
        .iter()
        .enumerate()
        .all(|(i, o)| i == 2 || matches!(o, BuildOutcome::Built { cached: true, .. })));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn missing_compiler_is_an_error_that_says_so() {
    let err = Builder::new(Compiler::new("no-such-cc-polytune", ["-O2"]), cache_dir("nocc")).unwrap_err();
    assert!(matches!(err, BuildError::CompilerNotFound { .. }));
    assert!(err.to_string().contains("no-such-cc-polytune"));
}
