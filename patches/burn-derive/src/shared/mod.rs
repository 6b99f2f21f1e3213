pub(crate) mod attribute;
pub(crate) mod enum_variant;
pub(crate) mod field;
pub(crate) mod generics;
