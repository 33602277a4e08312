//! The cost estimates of cel-go's own functions (`functionCost`,
//! `checker/cost.go`): string traversals, regular expressions, list
//! membership, the logical operators, concatenations and comparisons; one
//! unit for any other call.

use super::cost::Node;
use super::est::{Entries, Est, UNKNOWN};

/// The call's cost (its arguments' included), its result's size, and the
/// entries of the container it makes, given the entries of the arguments
/// it combines (`entries`: the operands of `+`, the branches of `?:`).
pub(crate) fn standard(
    id: &str,
    target: Option<&Node<'_>>,
    nodes: &[Node<'_>],
    costs: &[Est],
    entries: [Option<Entries>; 2],
) -> (Est, Option<Est>, Option<Entries>) {
    let arg_sum = costs.iter().fold(Est::fixed(0), |a, c| a.add(*c));
    let or_unknown = |n: &Node<'_>| n.size.unwrap_or(UNKNOWN);
    let combined = match entries {
        [Some(a), Some(b)] => Some(a.union(b)),
        _ => None,
    };
    let plain = |cost: Est, size: Option<Est>| (cost, size, None);
    match id {
        "string_format" if target.is_some() => {
            let t = target.map(or_unknown).unwrap_or(UNKNOWN);
            plain(t.factor(0.1).add(arg_sum), None)
        }
        "string_to_bytes" if nodes.len() == 1 => {
            let s = or_unknown(&nodes[0]);
            let size = Est {
                min: s.min,
                max: s.max.saturating_mul(4),
            };
            plain(s.factor(0.1).add(arg_sum), Some(size))
        }
        "bytes_to_string" if nodes.len() == 1 => {
            let s = or_unknown(&nodes[0]);
            plain(
                s.factor(0.1).add(arg_sum),
                Some(Est {
                    min: s.min / 4,
                    max: s.max,
                }),
            )
        }
        "strings_quote" if nodes.len() == 1 => {
            let s = or_unknown(&nodes[0]);
            let size = Est {
                min: s.min.saturating_add(2),
                max: s.max.saturating_mul(2).saturating_add(2),
            };
            plain(s.factor(0.1).add(arg_sum), Some(size))
        }
        "starts_with_string" | "ends_with_string" if nodes.len() == 1 => {
            plain(or_unknown(&nodes[0]).factor(0.1).add(arg_sum), None)
        }
        "in_list" if nodes.len() == 2 => {
            plain(or_unknown(&nodes[1]).factor(1.0).add(arg_sum), None)
        }
        "matches_string" if target.is_some() && nodes.len() == 1 => {
            let t = target.map(or_unknown).unwrap_or(UNKNOWN);
            let s = t.add(Est::fixed(1)).factor(0.1);
            plain(s.mul(or_unknown(&nodes[0]).factor(0.25)).add(arg_sum), None)
        }
        "contains_string" if target.is_some() && nodes.len() == 1 => {
            let t = target.map(or_unknown).unwrap_or(UNKNOWN).factor(0.1);
            plain(t.mul(or_unknown(&nodes[0]).factor(0.1)).add(arg_sum), None)
        }
        "logical_or" | "logical_and" if costs.len() == 2 => plain(
            Est {
                min: costs[0].min,
                max: costs[0].add(costs[1]).max,
            },
            None,
        ),
        "conditional" if nodes.len() == 3 => {
            let size = or_unknown(&nodes[1]).union(or_unknown(&nodes[2]));
            (costs[0].add(costs[1].union(costs[2])), Some(size), combined)
        }
        "add_string" | "add_bytes" | "add_list" if nodes.len() == 2 => {
            let size = or_unknown(&nodes[0]).add(or_unknown(&nodes[1]));
            let cost = if id == "add_list" {
                Est::fixed(1).add(arg_sum)
            } else {
                size.factor(0.1).add(arg_sum)
            };
            (cost, Some(size), combined)
        }
        "less_string"
        | "greater_string"
        | "less_equals_string"
        | "greater_equals_string"
        | "less_bytes"
        | "greater_bytes"
        | "less_equals_bytes"
        | "greater_equals_bytes"
        | "equals"
        | "not_equals"
            if nodes.len() == 2 =>
        {
            let smallest = or_unknown(&nodes[0]).max.min(or_unknown(&nodes[1]).max);
            let c = Est {
                min: u64::from(smallest > 0),
                max: smallest,
            };
            plain(c.factor(0.1).add(arg_sum), None)
        }
        _ => plain(Est::fixed(1).add(arg_sum), None),
    }
}
