//! The parts of TensorFlow's `event.proto`, `summary.proto` and `tensor.proto` that scalars
//! use, field numbers as published; prost skips the fields left out (graphs, images, audio).

/// One entry of an event file (`tensorflow.Event`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Event {
    /// Seconds since the Unix epoch when the event was written.
    #[prost(double, tag = "1")]
    pub wall_time: f64,
    /// The step (Keras: the epoch from 0, or the batch) the event belongs to.
    #[prost(int64, tag = "2")]
    pub step: i64,
    /// What the event holds.
    #[prost(oneof = "What", tags = "3, 5")]
    pub what: Option<What>,
}

/// The kinds of event Kiln reads or writes (`Event.what`).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum What {
    /// The first event of a file: `brain.Event:2`.
    #[prost(string, tag = "3")]
    FileVersion(String),
    /// Values logged at one step.
    #[prost(message, tag = "5")]
    Summary(Summary),
}

/// Values logged at one step (`tensorflow.Summary`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Summary {
    /// One per tag.
    #[prost(message, repeated, tag = "1")]
    pub value: Vec<Value>,
}

/// One tagged value (`tensorflow.Summary.Value`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Value {
    /// The series it belongs to: `epoch_loss`, `train_loss`, `Loss/train`…
    #[prost(string, tag = "1")]
    pub tag: String,
    /// Which TensorBoard plugin the value is for.
    #[prost(message, optional, tag = "9")]
    pub metadata: Option<SummaryMetadata>,
    /// The value: a float (PyTorch's `SummaryWriter`) or a tensor (TensorFlow 2, Keras).
    #[prost(oneof = "Payload", tags = "2, 8")]
    pub payload: Option<Payload>,
}

/// The two ways a scalar is stored (`Summary.Value.value`).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Payload {
    /// A scalar in the TensorFlow 1 form.
    #[prost(float, tag = "2")]
    SimpleValue(f32),
    /// A tensor; a scalar one has a single element.
    #[prost(message, tag = "8")]
    Tensor(TensorProto),
}

/// Which plugin a value is for (`tensorflow.SummaryMetadata`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryMetadata {
    /// The plugin and its own data.
    #[prost(message, optional, tag = "1")]
    pub plugin_data: Option<PluginData>,
}

/// A plugin's name and private bytes (`SummaryMetadata.PluginData`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PluginData {
    /// `scalars`, `histograms`, `images`, `text`, `hparams`…
    #[prost(string, tag = "1")]
    pub plugin_name: String,
}

/// A tensor (`tensorflow.TensorProto`), as far as a scalar needs.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// The element type (`tensorflow.DataType`): see [`DataType`].
    #[prost(int32, tag = "1")]
    pub dtype: i32,
    /// The shape; no dimensions for a scalar.
    #[prost(message, optional, tag = "2")]
    pub tensor_shape: Option<TensorShape>,
    /// The elements packed little-endian, when not in a typed field below.
    #[prost(bytes = "vec", tag = "4")]
    pub tensor_content: Vec<u8>,
    /// Elements of a float tensor.
    #[prost(float, repeated, tag = "5")]
    pub float_val: Vec<f32>,
    /// Elements of a double tensor.
    #[prost(double, repeated, tag = "6")]
    pub double_val: Vec<f64>,
    /// Elements of an int32 (and int16, int8, uint8) tensor.
    #[prost(int32, repeated, tag = "7")]
    pub int_val: Vec<i32>,
    /// Elements of an int64 tensor.
    #[prost(int64, repeated, tag = "10")]
    pub int64_val: Vec<i64>,
    /// Elements of a half or bfloat16 tensor, one 16-bit pattern per int32.
    #[prost(int32, repeated, tag = "13")]
    pub half_val: Vec<i32>,
}

/// A tensor's shape (`tensorflow.TensorShapeProto`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShape {
    /// One per dimension.
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<Dimension>,
}

/// One dimension of a shape (`TensorShapeProto.Dim`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dimension {
    /// Its length.
    #[prost(int64, tag = "1")]
    pub size: i64,
}

/// The element types a scalar may have (`tensorflow.DataType`'s numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataType {
    /// `DT_FLOAT`.
    Float = 1,
    /// `DT_DOUBLE`.
    Double = 2,
    /// `DT_INT32`.
    Int32 = 3,
    /// `DT_INT64`.
    Int64 = 9,
    /// `DT_BFLOAT16`.
    BFloat16 = 14,
    /// `DT_HALF`.
    Half = 19,
}

impl DataType {
    /// The type numbered `dtype`, if a scalar of it can be read as a number.
    pub fn from_number(dtype: i32) -> Option<Self> {
        [
            Self::Float,
            Self::Double,
            Self::Int32,
            Self::Int64,
            Self::BFloat16,
            Self::Half,
        ]
        .into_iter()
        .find(|t| *t as i32 == dtype)
    }
}
