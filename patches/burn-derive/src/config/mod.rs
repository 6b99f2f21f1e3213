mod analyzer;
mod analyzer_enum;
mod analyzer_struct;
mod base;

pub(crate) use analyzer::*;
pub(crate) use analyzer_enum::*;
pub(crate) use analyzer_struct::*;
pub(crate) use base::*;
