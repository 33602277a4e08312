//! kube-openapi's `validate.Result`: the errors of a validation, without
//! repeats (two errors with the same message are one), and the match
//! count, which `anyOf` and `oneOf` use to pick the branch whose errors
//! they report (the one with the most checks that passed).

use std::collections::HashSet;

use super::errors::OpenApiError;

/// A validation result.
#[derive(Clone, Debug, Default)]
pub(crate) struct GoResult {
    errors: Vec<OpenApiError>,
    seen: HashSet<String>,
    /// `MatchCount`.
    pub(crate) match_count: usize,
}

impl GoResult {
    /// An empty result (`new(Result)`).
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A result of one error and no match (`errorHelp.sErr`).
    pub(crate) fn single(error: OpenApiError) -> Self {
        let mut result = Self::new();
        result.add(error);
        result
    }

    /// `AddErrors`: adds an error unless one with the same message is
    /// already there.
    pub(crate) fn add(&mut self, error: OpenApiError) {
        if self.seen.insert(error.message().to_string()) {
            self.errors.push(error);
        }
    }

    /// `Merge`: the other's errors (without repeats) and match count.
    pub(crate) fn merge(&mut self, other: GoResult) {
        for error in other.errors {
            self.add(error);
        }
        self.match_count += other.match_count;
    }

    /// `Inc`.
    pub(crate) fn inc(&mut self) {
        self.match_count += 1;
    }

    /// `IsValid`: no errors.
    pub(crate) fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }

    /// The errors, in the order they were added.
    pub(crate) fn errors(&self) -> &[OpenApiError] {
        &self.errors
    }

    /// `keepRelevantErrors`: the errors whose message starts with
    /// `IMPORTANT!`, without that prefix, as plain errors; no match count.
    pub(crate) fn keep_relevant(&self) -> GoResult {
        let mut kept = GoResult::new();
        for error in &self.errors {
            if let Some(rest) = error.message().strip_prefix("IMPORTANT!") {
                kept.add(OpenApiError::Plain(rest.to_string()));
            }
        }
        kept
    }

    /// What ratcheting keeps of a result (`MergeAsWarnings` into a new
    /// result): the errors become warnings, which nobody reports; only the
    /// match count remains.
    pub(crate) fn into_warnings(self) -> GoResult {
        GoResult {
            match_count: self.match_count,
            ..GoResult::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::validate::errors;

    #[test]
    fn the_same_message_is_kept_once() {
        let mut result = GoResult::single(errors::required(".a"));
        let mut other = GoResult::single(errors::required(".a"));
        other.add(errors::required(".b"));
        other.inc();
        result.merge(other);
        assert_eq!(result.errors().len(), 2);
        assert_eq!(result.match_count, 1);
        assert!(!result.is_valid());
    }

    #[test]
    fn only_important_errors_are_relevant() {
        let mut result = GoResult::single(errors::required("IMPORTANT!x"));
        result.add(errors::required("y"));
        let kept = result.keep_relevant();
        assert_eq!(
            kept.errors(),
            &[OpenApiError::Plain("x in body is required".into())]
        );
    }
}
