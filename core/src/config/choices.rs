//! The choices of an experiment that are one word each, declared through `settings::choice!`.

crate::settings::choice! {
    /// What of a pretrained network trains.
    FineTune for FineTune {
        /// Every layer, the pretrained ones at `backbone_lr_scale` times the learning rate.
        #[default]
        Full => "full", "the whole network",
        /// Only the classifier head, on features the frozen backbone computes once per image
        /// (batch norm statistics frozen too); after `unfreeze_after` epochs, if set, everything.
        LinearProbe => "linear-probe", "a linear probe (head only)",
    }
}

crate::settings::choice! {
    /// How each class weighs in the training loss.
    ClassWeights for ClassWeights {
        /// Every image alike.
        #[default]
        None => "none", "none",
        /// Image weight n / (classes × images of its class): scikit-learn's `balanced`.
        Balanced => "balanced", "balanced (rare classes weigh more)",
    }
}

crate::settings::choice! {
    /// Where a multi-label model's probability turns into "has the label".
    Threshold for Threshold {
        /// 0.5 for every label.
        #[default]
        Half => "0.5", "0.5",
        /// Per label, the probability with the best F1 on the validation images.
        PerLabel => "per-label", "per label, best F1 on validation",
        /// One probability for every label, the best F1 of all decisions on validation.
        Shared => "shared", "one for all, best F1 on validation",
    }
}

crate::settings::choice! {
    /// How raw 0–255 pixel bytes become the network's input.
    InputScaling for InputScaling {
        /// Divide by 255, as PyTorch's `ToTensor` does.
        #[default]
        UnitRange => "unit-range", "÷255 (0–1)",
        /// Feed the raw 0–255 values, as the Keras code of the user report did.
        Raw => "raw", "raw 0–255",
        /// Subtract the training split's mean and divide by its standard deviation (per channel).
        Standardize => "standardize", "standardize",
        /// Divide by 255, then subtract ImageNet's mean and divide by its standard deviation per
        /// channel, as torchvision's pretrained weights expect.
        ImageNet => "imagenet", "ImageNet mean and std (pretrained)",
    }
}

impl InputScaling {
    /// ImageNet's per-channel mean of 0–1 pixels (red, green, blue), as torchvision uses it.
    pub const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
    /// ImageNet's per-channel standard deviation of 0–1 pixels.
    pub const IMAGENET_STD: [f32; 3] = [0.229, 0.224, 0.225];
}

crate::settings::choice! {
    /// The float type the network computes in.
    Precision for Precision {
        /// 32-bit floats throughout.
        #[default]
        F32 => "f32", "f32",
        /// Mixed precision: f32 master weights, f16 arithmetic, the loss scaled so small gradients
        /// do not flush to zero. Needs a GPU whose adapter has 16-bit float shaders.
        F16 => "f16", "f16 (mixed)",
    }
}

crate::settings::choice! {
    /// What the cross-entropy is computed from: one of the defaults that make "the same model" end
    /// at different accuracies in different frameworks.
    LossInput for Loss {
        /// Log-softmax of the logits, exact for any logit: PyTorch's `CrossEntropyLoss`, and what
        /// Keras on TensorFlow computes for a softmax layer followed by categorical cross-entropy
        /// (it takes the softmax's input instead of its output).
        #[default]
        Logits => "logits", "on logits",
        /// A softmax output and the log of its probabilities clipped to [1e-7, 1 − 1e-7], as Keras
        /// computes `categorical_crossentropy` on its JAX and PyTorch backends: a clipped
        /// probability passes no gradient.
        Probabilities => "probabilities", "on clipped probabilities",
    }
}

crate::settings::choice! {
    /// How a folder's images are brought to the image size.
    ResizeFilter for Resize {
        /// Bilinear over each output pixel's whole footprint, as PIL and torchvision's `Resize`
        /// do: shrinking averages fine detail away.
        #[default]
        Antialiased => "antialiased", "bilinear, antialiased (PIL, torchvision)",
        /// Bilinear from the four nearest source pixels, as `tf.image.resize` and Keras's
        /// `image_dataset_from_directory` do: shrinking aliases fine detail.
        Bilinear => "bilinear", "bilinear, no antialias (Keras, TensorFlow)",
        /// The nearest source pixel, as TensorFlow's `nearest`.
        Nearest => "nearest", "nearest pixel",
    }
}

impl ResizeFilter {
    /// What the image loader is asked for: images brought to `side_px` square by this filter.
    pub fn at(self, side_px: u32) -> kiln_formats::folder::Resize {
        use kiln_formats::folder::ResizeFilter as Loader;
        let filter = match self {
            ResizeFilter::Antialiased => Loader::Antialiased,
            ResizeFilter::Bilinear => Loader::Bilinear,
            ResizeFilter::Nearest => Loader::Nearest,
        };
        kiln_formats::folder::Resize { side_px, filter }
    }
}
