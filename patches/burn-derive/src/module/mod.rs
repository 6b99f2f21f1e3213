pub(crate) mod codegen;
pub(crate) mod codegen_enum;
pub(crate) mod codegen_struct;
pub(crate) mod display;
pub(crate) mod generics;

mod base;

pub(crate) use base::*;
