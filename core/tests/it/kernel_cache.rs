//! Autotune results go to the per-user cache folder. Its own test binary: CubeCL's configuration
//! is set once per process.

// A failed unwrap in a test or an example is a failure that names its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use cubecl::config::cache::CacheConfig;
use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};

#[test]
fn autotune_results_are_kept_where_kiln_says_and_only_set_once() {
    let dir = std::env::temp_dir().join(format!("kiln-kernel-cache-{}", std::process::id()));
    assert!(kiln_core::device::keep_kernel_cache_in(&dir));
    match &CubeClRuntimeConfig::get().environment.path {
        CacheConfig::Directory(path) => assert_eq!(path, &dir),
        other => panic!("the cache is elsewhere: {other:?}"),
    }
    // A second call cannot move a cache that devices may already use.
    assert!(!kiln_core::device::keep_kernel_cache_in(&dir.join("other")));
    assert!(
        kiln_core::device::kernel_cache_dir().is_none_or(|d| d.ends_with("kiln/cubecl")),
        "the per-user folder is named after Kiln"
    );
}
