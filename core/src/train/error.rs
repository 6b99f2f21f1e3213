//! What can end a run that a person did not choose to end.

/// Why training could not run or go on.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// The model could not be built for this data.
    #[error("{0}")]
    Model(#[from] crate::model::ModelError),
    /// What the run store keeps (a checkpoint to resume from) could not be used.
    #[error("{0}")]
    Store(String),
    /// The device had no memory left for the model, its activations and the data set.
    #[error(
        "the device ran out of memory ({0}). Try a smaller batch, a smaller input size or model, or the CPU; the run folder keeps everything up to this point."
    )]
    OutOfMemory(String),
    /// The GPU stopped answering (driver reset, unplugged, or the OS took it back).
    #[error(
        "the GPU was lost during training ({0}). The run folder keeps everything up to this point; `kiln train --resume` goes on from the last finished epoch."
    )]
    DeviceLost(String),
    /// Something inside the engine failed that Kiln has no better sentence for.
    #[error(
        "training stopped on an internal error ({0}). The run folder keeps everything up to this point."
    )]
    Crashed(String),
    /// The run asks for a combination Kiln does not train; the sentence says what to change.
    #[error("{0}")]
    Unsupported(String),
    /// The input pipeline refused the data or its options.
    #[error("the input pipeline cannot build batches: {0}")]
    Pipeline(#[from] kiln_shaders::BatchError),
    /// The pretrained weights file does not fit the model.
    #[error("{0}")]
    Weights(Box<crate::weights::WeightsError>),
    /// Reading metrics back from the device failed (device lost or out of memory).
    #[error(
        "the device stopped answering while reading metrics back ({0}); it may be out of memory or lost. Try a smaller batch or model."
    )]
    Readback(String),
    /// The connection to the box a remote device is on broke off: the box stopped, or the
    /// network between went away.
    #[error(
        "the connection to the box at {address} was lost ({reason}). The run folder keeps everything up to this point; `kiln train --resume RUN --device D` goes on from the last finished epoch, on this machine or another box."
    )]
    BoxLost {
        /// The box.
        address: String,
        /// What the remote backend said.
        reason: String,
    },
}

impl From<crate::weights::WeightsError> for TrainError {
    fn from(error: crate::weights::WeightsError) -> Self {
        Self::Weights(Box::new(error))
    }
}

impl TrainError {
    /// What this error means for a run on a device of the box at `address`: the device going
    /// silent there is the connection going, whatever the remote backend's words for it.
    pub fn on_box(self, address: &crate::remote::BoxAddress) -> Self {
        match self {
            Self::DeviceLost(reason) | Self::Readback(reason) | Self::Crashed(reason) => {
                Self::BoxLost {
                    address: address.to_string(),
                    reason,
                }
            }
            other => other,
        }
    }

    /// The error a panic inside Burn or the GPU runtime stands for, told as what to do about it.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = crate::panics::panic_message(payload);
        // The runtime's own text carries a backtrace; the first line says what happened.
        let first_line = message.lines().next().unwrap_or(message).trim().to_owned();
        let lower = message.to_lowercase();
        if [
            "out of memory",
            "out-of-memory",
            "outofmemory",
            "out of device memory",
            "buffertoobig",
        ]
        .iter()
        .any(|needle| lower.contains(needle))
        {
            Self::OutOfMemory(first_line)
        } else if lower.contains("device lost") || lower.contains("devicelost") {
            Self::DeviceLost(first_line)
        } else {
            Self::Crashed(first_line)
        }
    }
}
