//! What the GPU tests share: whether this machine has an NVIDIA GPU, and a
//! machine profile with one GPU slot.

use std::path::Path;

/// Whether `nvidia-smi` lists a GPU here.
pub fn has_gpu() -> bool {
    std::process::Command::new("nvidia-smi").arg("-L").output().is_ok_and(|o| o.status.success())
}

/// A machine profile's text with GPU 0 as slot `h100`, built by `nvcc` for
/// the H100's architecture (`-arch=native` needs a GPU to ask).
pub fn gpu_profile(nvcc: &Path) -> String {
    format!(
        "nvcc = {:?}\nnvcc_flags = [\"-O3\", \"-arch=sm_90\"]\n[[slots]]\nname = \"h100\"\ngpu = 0\n",
        nvcc.display().to_string()
    )
}
