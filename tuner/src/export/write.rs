//! An [`Export`] written to the user's disk, and what it says of itself.

use std::path::Path;

use super::Export;
use crate::error::{Context, Result};

impl Export {
    /// The file written to `path`, a GPU winner's CUDA unit first beside it
    /// (`.cu`: the file that calls it is the last thing written), each whole
    /// or not at all; each file written is said to `said`.
    pub fn write(&self, path: &Path, said: &mut dyn FnMut(&str)) -> Result<()> {
        if let Some(unit) = &self.cuda {
            let cu = path.with_extension("cu");
            write_whole(&cu, unit)?;
            said(&format!("wrote {} (the CUDA unit the file calls)", cu.display()));
        }
        write_whole(path, &self.text)?;
        said(&format!("wrote {} (from {})", path.display(), self.file.display()));
        Ok(())
    }

    /// Its variants, the machines that run the code as written, its
    /// verified builds and how it compiles, one line each.
    pub fn notes(&self) -> String {
        let mut notes = String::new();
        for b in &self.branches {
            notes += &format!("  variant {b}\n");
        }
        for m in &self.unchanged {
            notes += &format!(
                "  machine {m}: no winner faster than the original: the code as written runs there\n"
            );
        }
        for v in &self.verified {
            notes += &format!("  verified: {v}\n");
        }
        notes + &format!("  compile:  {}\n", self.compile)
    }
}

/// `text` written to `path` whole or not at all.
fn write_whole(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", executor::process::unique_suffix()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("{}: cannot write", path.display()))
}
