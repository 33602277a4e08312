//! The ranges the cost estimate works with (cel-go's `SizeEstimate` and
//! `CostEstimate`, `checker/cost.go`): saturating sums and products, and
//! cost factors rounded up.

/// A range of sizes or costs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Est {
    /// The least.
    pub min: u64,
    /// The most.
    pub max: u64,
}

/// Nothing known.
pub(crate) const UNKNOWN: Est = Est {
    min: 0,
    max: u64::MAX,
};

impl Est {
    /// Exactly `n`.
    pub const fn fixed(n: u64) -> Est {
        Est { min: n, max: n }
    }

    /// The sum, saturating.
    pub fn add(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    /// The product, saturating.
    pub fn mul(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// Times a cost factor, rounded up (`MultiplyByCostFactor`).
    pub fn factor(self, f: f64) -> Est {
        let by = |x: u64| {
            let xf = x as f64;
            if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
                return u64::MAX;
            }
            let ceil = (xf * f).ceil();
            if ceil >= 18_446_744_073_709_551_616.0 {
                u64::MAX
            } else {
                ceil as u64
            }
        };
        Est {
            min: by(self.min),
            max: by(self.max),
        }
    }

    /// The smallest least and the largest most.
    pub fn union(self, o: Est) -> Est {
        Est {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// The sizes of a container's keys and values.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entries {
    /// The container is a list (else a map).
    pub list: bool,
    /// The size of the keys.
    pub key: Est,
    /// The size of the values.
    pub val: Est,
}

impl Entries {
    /// The union of two containers' entries.
    pub fn union(self, other: Entries) -> Entries {
        Entries {
            list: self.list,
            key: self.key.union(other.key),
            val: self.val.union(other.val),
        }
    }
}
