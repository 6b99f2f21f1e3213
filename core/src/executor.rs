//! The one executor native code needs: the engine's futures (the training loop, wgpu's adapter
//! listing) run to their end on the calling thread. In a browser they are spawned on the page's
//! event loop instead, so this module is native only.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

/// Wakes the thread blocked in [`block_on`].
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` to completion on this thread, parked while it waits (a device read, a wgpu
/// callback); Burn's own synchronous reads wait the same way, so nothing is slower for it.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A future that is pending once and wakes its waker from another thread.
    struct WokenLater(bool);

    impl Future for WokenLater {
        type Output = &'static str;
        fn poll(
            mut self: std::pin::Pin<&mut Self>,
            context: &mut Context<'_>,
        ) -> Poll<Self::Output> {
            if self.0 {
                return Poll::Ready("done");
            }
            self.0 = true;
            let waker = context.waker().clone();
            std::thread::spawn(move || waker.wake());
            Poll::Pending
        }
    }

    #[test]
    fn a_future_woken_from_another_thread_runs_to_its_end() {
        assert_eq!(block_on(WokenLater(false)), "done");
    }
}
