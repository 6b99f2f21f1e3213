//! Where CubeCL keeps its autotune results between launches: the per-user cache folder.

/// The per-user folder Kiln keeps CubeCL's autotune results in.
pub fn kernel_cache_dir() -> Option<std::path::PathBuf> {
    dirs::cache_dir().map(|dir| dir.join("kiln").join("cubecl"))
}

/// Keeps CubeCL's autotune results in `dir`, so a second launch of the same workload skips the
/// autotuning of the first. CubeCL's own default is the `target/` folder of the nearest Cargo
/// workspace, which an installed program does not have. Must run before any GPU device starts;
/// returns false when it came too late or a `cubecl.toml` already chose a place.
#[cfg(not(target_arch = "wasm32"))]
pub fn keep_kernel_cache_in(dir: &std::path::Path) -> bool {
    use cubecl::config::cache::CacheConfig;
    use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};
    let mut config = CubeClRuntimeConfig::from_current_dir().override_from_env();
    if !matches!(config.environment.path, CacheConfig::Target) {
        return false;
    }
    config.environment.path = CacheConfig::Directory(dir.to_owned());
    CubeClRuntimeConfig::try_set(config)
}

/// In a browser there is no disk for autotune results: each page load autotunes afresh.
#[cfg(target_arch = "wasm32")]
pub fn keep_kernel_cache_in(_dir: &std::path::Path) -> bool {
    false
}
