//! Pause, resume and cancel, checked by the loop at step boundaries.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

const RUNNING: u8 = 0;
const PAUSED: u8 = 1;
const CANCELLED: u8 = 2;

/// Shared between a front end and the loop; cheap to check every step (one atomic load).
#[derive(Debug, Default)]
pub struct Control {
    state: AtomicU8,
    wake_lock: Mutex<()>,
    wake: Condvar,
}

/// What the loop should do at a step boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlState {
    /// Keep training.
    Running,
    /// Wait until resumed or cancelled.
    Paused,
    /// Stop after this step, keeping what was done.
    Cancelled,
}

impl Control {
    /// A control in the running state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the loop to wait at the next step boundary.
    pub fn pause(&self) {
        let _ = self
            .state
            .compare_exchange(RUNNING, PAUSED, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Lets a paused loop go on.
    pub fn resume(&self) {
        if self
            .state
            .compare_exchange(PAUSED, RUNNING, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.notify();
        }
    }

    /// Asks the loop to stop at the next step boundary; final.
    pub fn cancel(&self) {
        self.state.store(CANCELLED, Ordering::SeqCst);
        self.notify();
    }

    /// The current request.
    pub fn state(&self) -> ControlState {
        match self.state.load(Ordering::SeqCst) {
            RUNNING => ControlState::Running,
            PAUSED => ControlState::Paused,
            _ => ControlState::Cancelled,
        }
    }

    /// True once cancel was asked.
    pub fn is_cancelled(&self) -> bool {
        self.state() == ControlState::Cancelled
    }

    /// Blocks while paused; returns true if the loop should go on, false if cancelled.
    pub fn wait_while_paused(&self) -> bool {
        let mut guard = self
            .wake_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        loop {
            match self.state() {
                ControlState::Running => return true,
                ControlState::Cancelled => return false,
                ControlState::Paused => {
                    guard = self
                        .wake
                        .wait(guard)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    /// [`Self::wait_while_paused`] for the loop, which is a future: a native loop blocks its
    /// thread; a page's loop sleeps on the page's timer, since blocking would stop the page.
    pub(crate) async fn wait_out_pause(&self) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        return self.wait_while_paused();
        #[cfg(target_arch = "wasm32")]
        loop {
            match self.state() {
                ControlState::Running => return true,
                ControlState::Cancelled => return false,
                ControlState::Paused => crate::executor::sleep_ms(50).await,
            }
        }
    }

    fn notify(&self) {
        // Taking the lock orders this wake-up after a waiter's state check, so none is lost.
        let _guard = self
            .wake_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn pause_blocks_until_resume() {
        let control = Arc::new(Control::new());
        control.pause();
        let waiter = {
            let control = Arc::clone(&control);
            std::thread::spawn(move || control.wait_while_paused())
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished());
        control.resume();
        assert!(waiter.join().unwrap());
    }

    #[test]
    fn cancel_wakes_a_paused_loop_and_sticks() {
        let control = Arc::new(Control::new());
        control.pause();
        let waiter = {
            let control = Arc::clone(&control);
            std::thread::spawn(move || control.wait_while_paused())
        };
        std::thread::sleep(Duration::from_millis(20));
        control.cancel();
        assert!(!waiter.join().unwrap());
        control.resume();
        assert_eq!(control.state(), ControlState::Cancelled);
    }
}
