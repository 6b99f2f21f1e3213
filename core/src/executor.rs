//! The engine's futures (the training loop, wgpu's adapter listing) and where they wait. Native
//! code runs them to their end on the calling thread ([`block_on`]); a browser page spawns them on
//! its event loop, where the loop hands the page its turn ([`PageTurns`]) and a pause sleeps
//! ([`sleep_ms`]) instead of blocking the only thread the page has.

#[cfg(not(target_arch = "wasm32"))]
pub use native::block_on;
#[cfg(target_arch = "wasm32")]
pub use page::{PageTurns, sleep_ms};

#[cfg(not(target_arch = "wasm32"))]
mod native {
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
}

#[cfg(target_arch = "wasm32")]
mod page {
    use wasm_bindgen::{JsCast, JsValue};
    use web_time::{Duration, Instant};

    /// The longest the loop keeps the page's only thread before letting it draw a frame and
    /// answer clicks: about one frame at 60 Hz.
    const TURN: Duration = Duration::from_millis(16);

    /// When the loop last gave the page its turn; the CPU backend's steps never wait on
    /// anything, so without turns a run would freeze the page to its end.
    #[derive(Debug)]
    pub struct PageTurns(Instant);

    impl Default for PageTurns {
        fn default() -> Self {
            Self(Instant::now())
        }
    }

    impl PageTurns {
        /// Lets the page run (paint, input, the GPU's callbacks) once [`TURN`] has passed.
        pub async fn give_if_due(&mut self) {
            if self.0.elapsed() >= TURN {
                sleep_ms(0).await;
                self.0 = Instant::now();
            }
        }
    }

    /// Resolves after `ms` milliseconds on the page's timer, the page running meanwhile.
    pub async fn sleep_ms(ms: u32) {
        let promise = js_sys::Promise::new(&mut |resolve, _reject| {
            let set_timeout =
                js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("setTimeout"))
                    .ok()
                    .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
            let scheduled = set_timeout.is_some_and(|f| {
                f.call2(&JsValue::NULL, &resolve, &JsValue::from(ms))
                    .is_ok()
            });
            if !scheduled {
                // A global without timers (no known page has one): go on at once.
                let _ = resolve.call0(&JsValue::NULL);
            }
        });
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::native::*;
    use std::task::{Context, Poll};

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
