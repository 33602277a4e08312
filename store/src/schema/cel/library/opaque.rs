//! The values of the Kubernetes library types (`kubernetes.Quantity`,
//! `net.IP`, `net.CIDR`, `kubernetes.URL`, `kubernetes.NamedFormat`,
//! `kubernetes.Semver`) as CEL values of the `cel` crate: opaque values,
//! equal when their contents are, and helpers for the functions on them.

use std::any::Any;
use std::fmt::Debug;

use cel::ExecutionError;
use cel::common::types::{CelString, Kind, Type};
use cel::common::value::{CowVal, StaticVal, Val};

/// The contents of an opaque value.
pub(crate) trait Content: Clone + Debug + Send + Sync + 'static {
    /// The CEL type of the values.
    const TYPE: &'static Type;

    /// Whether two values are equal (`Equal`).
    fn same(&self, other: &Self) -> bool;
}

/// A value of a library type.
#[derive(Clone, Debug)]
pub(crate) struct Opaque<T: Content>(pub T);

impl<T: Content> Val for Opaque<T> {
    fn get_type(&self) -> &Type {
        T::TYPE
    }

    fn cel_type() -> &'static Type {
        T::TYPE
    }

    fn equals(&self, other: &dyn Val) -> bool {
        other
            .downcast_ref::<Opaque<T>>()
            .is_some_and(|o| self.0.same(&o.0))
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}

impl<T: Content> StaticVal for Opaque<T> {}

/// An opaque type of the given name.
pub(crate) const fn opaque_type(name: &'static str) -> Type {
    Type::simple_type(Kind::Opaque, name)
}

/// `no such overload`, for an argument of another type than declared.
pub(crate) fn no_overload() -> ExecutionError {
    ExecutionError::function_error("", "no such overload")
}

/// An error with cel-go's message.
pub(crate) fn error(function: &str, message: impl Into<String>) -> ExecutionError {
    ExecutionError::function_error(function, message.into())
}

/// The contents of argument `i`, a value of type `T`.
pub(crate) fn arg<'a, T: Content>(
    args: &'a [CowVal<'_, '_>],
    i: usize,
) -> Result<&'a T, ExecutionError> {
    args.get(i)
        .and_then(|a| a.downcast_ref::<Opaque<T>>())
        .map(|o| &o.0)
        .ok_or_else(no_overload)
}

/// Argument `i`, a string.
pub(crate) fn text<'a>(args: &'a [CowVal<'_, '_>], i: usize) -> Result<&'a str, ExecutionError> {
    args.get(i)
        .and_then(|a| a.downcast_ref::<CelString>())
        .map(|s| s.inner())
        .ok_or_else(no_overload)
}

/// A value as a function's result.
pub(crate) fn owned<'b, 'v, V: Val + 'v>(value: V) -> Result<CowVal<'b, 'v>, ExecutionError> {
    Ok(CowVal::owned(value))
}
