//! Turning a caught panic (a driver's, a backend's) into words a person can read.

/// What a panic said, whether it was raised with a `String` or a `&str`.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("no message")
}
