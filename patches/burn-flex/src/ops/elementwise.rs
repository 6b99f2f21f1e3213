//! Element-wise loops over contiguous slices, cut into one piece per thread of the current
//! rayon pool when the slice is large.
//!
//! Kiln's patch (see `patches/README.md` in Kiln). Flex ran its element-wise ops on the calling
//! thread below 4 M elements, so a CNN's activations (64 × 32 × 28 × 28 = 1.6 M), their ReLU
//! gradients and Adam's updates of a 400 k-weight layer each kept one core busy while the
//! other waited. Each element is computed by the same expression however the slice is cut, so
//! the results have the same bits on any number of threads.

use alloc::vec::Vec;
#[cfg(feature = "rayon")]
use core::mem::MaybeUninit;

/// Elements below which a loop stays on the calling thread: about 100 µs of a memory-bound
/// loop, well above what handing half of it to an awake worker costs.
#[cfg(feature = "rayon")]
pub(crate) const PARALLEL_ELEMENTS: usize = 128 * 1024;

/// The length of each piece of an `n`-element loop: one per thread, a whole number of cache
/// lines of `f32`.
#[cfg(feature = "rayon")]
fn piece_len(n: usize) -> usize {
    n.div_ceil(rayon::current_num_threads()).next_multiple_of(16).max(16)
}

/// `data[i] = op(data[i])` for every element.
pub(crate) fn map_inplace<E: Copy + Send + Sync>(data: &mut [E], op: impl Fn(E) -> E + Sync) {
    #[cfg(feature = "rayon")]
    if data.len() >= PARALLEL_ELEMENTS && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        let piece = piece_len(data.len());
        data.par_chunks_mut(piece)
            .for_each(|chunk| chunk.iter_mut().for_each(|x| *x = op(*x)));
        return;
    }
    data.iter_mut().for_each(|x| *x = op(*x));
}

/// `dst[i] = op(dst[i], src[i])` for every element.
pub(crate) fn zip_inplace<E: Copy + Send + Sync>(
    dst: &mut [E],
    src: &[E],
    op: impl Fn(E, E) -> E + Sync,
) {
    debug_assert_eq!(dst.len(), src.len());
    #[cfg(feature = "rayon")]
    if dst.len() >= PARALLEL_ELEMENTS && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        let piece = piece_len(dst.len());
        dst.par_chunks_mut(piece)
            .zip(src.par_chunks(piece))
            .for_each(|(d, s)| d.iter_mut().zip(s).for_each(|(x, &y)| *x = op(*x, y)));
        return;
    }
    dst.iter_mut().zip(src).for_each(|(x, &y)| *x = op(*x, y));
}

/// `op(src[i])` for every element, as a new vector.
pub(crate) fn map_collect<E: Copy + Send + Sync, R: Send>(
    src: &[E],
    op: impl Fn(E) -> R + Sync + Send,
) -> Vec<R> {
    #[cfg(feature = "rayon")]
    if src.len() >= PARALLEL_ELEMENTS && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        let piece = piece_len(src.len());
        let mut out = Vec::with_capacity(src.len());
        out.spare_capacity_mut()[..src.len()]
            .par_chunks_mut(piece)
            .zip(src.par_chunks(piece))
            .for_each(|(o, s)| {
                o.iter_mut()
                    .zip(s)
                    .for_each(|(o, &x)| *o = MaybeUninit::new(op(x)))
            });
        // SAFETY: the pieces cover the whole capacity, and every element was written above.
        unsafe { out.set_len(src.len()) };
        return out;
    }
    src.iter().map(|&x| op(x)).collect()
}

/// `op(a[i], b[i])` for every element, as a new vector.
pub(crate) fn zip_collect<E: Copy + Send + Sync, R: Send>(
    a: &[E],
    b: &[E],
    op: impl Fn(E, E) -> R + Sync + Send,
) -> Vec<R> {
    debug_assert_eq!(a.len(), b.len());
    #[cfg(feature = "rayon")]
    if a.len() >= PARALLEL_ELEMENTS && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        let piece = piece_len(a.len());
        let mut out = Vec::with_capacity(a.len());
        out.spare_capacity_mut()[..a.len()]
            .par_chunks_mut(piece)
            .zip(a.par_chunks(piece).zip(b.par_chunks(piece)))
            .for_each(|(o, (a, b))| {
                o.iter_mut()
                    .zip(a.iter().zip(b))
                    .for_each(|(o, (&x, &y))| *o = MaybeUninit::new(op(x, y)))
            });
        // SAFETY: the pieces cover the first `a.len()` elements, and each was written above.
        unsafe { out.set_len(a.len()) };
        return out;
    }
    a.iter().zip(b).map(|(&x, &y)| op(x, y)).collect()
}
