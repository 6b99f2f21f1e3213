//! Autotune results go to the per-user cache folder. CubeCL's configuration is set once per
//! process, so the test runs in a process of its own (`crate::fresh_process`).

use cubecl::config::cache::CacheConfig;
use cubecl::config::{CubeClRuntimeConfig, RuntimeConfig};

#[test]
fn autotune_results_are_kept_where_kiln_says_and_only_set_once() {
    crate::fresh_process::run_alone("kernel_cache::in_a_process_where_no_device_started");
}

/// The test itself, run by the one above in a process where no GPU runtime has started.
#[test]
#[ignore = "runs in a process of its own, started by the test above"]
fn in_a_process_where_no_device_started() {
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
