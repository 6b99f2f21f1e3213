//! `kiln`: with no arguments opens the window; subcommands run headless.

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    keep_freed_memory_a_while();
    kiln::cli::main()
}

/// Keeps memory mimalloc got back from freed tensors for 10 s (100 s for whole arenas) before
/// handing it to the kernel, rather than 10 ms: a training step frees and asks again for the
/// same large buffers every step, and memory handed back costs page faults and zeroed pages to
/// get again. ConvNeXt-Tiny at 224×224, batch 16, 2 threads: 4.7 → 3.9–4.2 s a step, peak
/// memory 2.6 → 2.9–3.3 GB; a run's memory still goes back to the kernel a while after it ends.
#[cfg(not(target_arch = "wasm32"))]
fn keep_freed_memory_a_while() {
    // mimalloc's C API, which the `mimalloc` crate links; its Rust binding of this call would
    // cost a crate more. `mi_option_purge_delay` is 15 in mimalloc 2 and 3 alike.
    unsafe extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    const PURGE_DELAY: std::ffi::c_int = 15;
    const DELAY_MS: std::ffi::c_long = 10_000;
    // SAFETY: sets one integer option, read by mimalloc on each later purge; any thread may.
    unsafe { mi_option_set(PURGE_DELAY, DELAY_MS) };
}

/// A browser page opens the window through the `kiln-web` crate; there is no program to run.
#[cfg(target_arch = "wasm32")]
fn main() {}
