//! The cost estimates of particular functions: cel-go's list and set
//! extensions (`ext/lists.go`, `ext/sets.go`, by overload id) and the
//! Kubernetes libraries (`apiserver/pkg/cel/library/cost.go`, by function
//! name). Each gives the call's own cost and, where known, its result's
//! size; `None` leaves the call to cel-go's defaults.

use cel::common::ast::{Expr, LiteralValue};

use super::cost::Node;
use super::est::Est;
use super::types::Ty;

type Sized<'s> = &'s dyn Fn(&Node<'_>) -> Est;
type Estimate = Option<(Est, Option<Est>)>;

/// A literal int argument, else `default` (`nodeAsIntValue`).
fn int_value(node: &Node<'_>, default: u64) -> u64 {
    match node.expr.map(|e| &e.expr) {
        Some(Expr::Literal(LiteralValue::Int(i))) => u64::try_from(*i.inner()).unwrap_or(0),
        _ => default,
    }
}

/// A call allocating a list of `size` (`estimateAllocatingListCall`).
fn allocating(factor: f64, size: Est) -> Estimate {
    let cost = size.factor(factor).add(Est::fixed(1)).add(Est::fixed(10));
    Some((cost, Some(size)))
}

/// The estimators cel-go registers by overload id.
pub(crate) fn overload(
    id: &str,
    target: Option<&Node<'_>>,
    args: &[Node<'_>],
    sized: Sized<'_>,
) -> Estimate {
    match id {
        // The keys of a two-variable comprehension's range: as many as it has.
        "@keys" if args.len() == 1 => Some((Est::fixed(1), Some(sized(&args[0])))),
        "list_slice" => {
            let (t, [start, end]) = (target?, args) else {
                return None;
            };
            let size = sized(t);
            let (from, to) = (int_value(start, 0), int_value(end, size.max));
            allocating(1.0, Est::fixed(to.saturating_sub(from)))
        }
        "lists_range" if target.is_none() && args.len() == 1 => {
            allocating(1.0, Est::fixed(int_value(&args[0], u64::MAX)))
        }
        "list_reverse" if args.is_empty() => allocating(1.0, sized(target?)),
        "list_flatten" | "list_flatten_int" if args.len() <= 1 => {
            let depth = args.first().map_or(1, |d| int_value(d, u64::MAX));
            allocating(depth as f64, sized(target?))
        }
        "list_distinct" if args.is_empty() => {
            let size = sized(target?);
            allocating(2.0, size.mul(size))
        }
        "list_sets_contains_list" | "list_sets_intersects_list" | "list_sets_equivalent_list"
            if args.len() == 2 =>
        {
            let factor = if id == "list_sets_equivalent_list" {
                2.0
            } else {
                1.0
            };
            let cost = sized(&args[0])
                .mul(sized(&args[1]))
                .factor(factor)
                .add(Est::fixed(1));
            Some((cost, None))
        }
        _ => {
            let by = if id.ends_with("_sortByAssociatedKeys") {
                args.first()?
            } else if id.ends_with("_sort") && args.is_empty() {
                target?
            } else {
                return None;
            };
            let strings = id.starts_with("list_string_") || id.starts_with("list_bytes_");
            let size = sized(by);
            allocating(if strings { 2.1 } else { 2.0 }, size.mul(size))
        }
    }
}

/// The element of a list node (`listElementNode`).
fn element<'e>(list: &Node<'e>) -> Option<Node<'e>> {
    let elem = list.ty.params().first().map(|t| (*t).clone())?;
    Some(Node {
        path: list.path.clone().map(|mut p| {
            p.push("@items".into());
            p
        }),
        ty: elem,
        expr: None,
        size: None,
    })
}

fn unit() -> Estimate {
    Some((Est::fixed(1), None))
}

/// `replace`'s result size, as the real server bounds it.
fn replaced(size: Est, from: Est, with: Est) -> Est {
    let (mut count, mut kept) = (Est::fixed(0), Est::fixed(0));
    if from.min == 0 {
        count.max = if size.max < u64::MAX {
            size.max + 1
        } else {
            size.max
        };
        kept.max = size.max;
    } else if with.max <= from.min {
        kept.max = size.max;
    } else {
        count.max = (size.max as f64 / from.min as f64).ceil() as u64;
    }
    if from.max == 0 {
        count.min = if size.min < u64::MAX {
            size.min + 1
        } else {
            size.min
        };
        kept.min = size.min;
    } else if from.max <= with.min {
        kept.min = size.min;
    } else {
        count.min = (size.min as f64 / from.max as f64).ceil() as u64;
    }
    count.mul(with).add(kept)
}

/// The Kubernetes library's estimates (`EstimateCallCost`).
pub(crate) fn kubernetes(
    function: &str,
    id: &str,
    target: Option<&Node<'_>>,
    args: &[Node<'_>],
    sized: Sized<'_>,
) -> Estimate {
    let first = || args.first();
    match function {
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            let t = target?;
            match element(t) {
                Some(elem) => {
                    let mut each = Est::fixed(1);
                    if matches!(elem.ty, Ty::String | Ty::Bytes) {
                        each = each.add(sized(&elem).factor(0.1));
                    }
                    Some((sized(t).mul(each), None))
                }
                None => Some((sized(t).factor(0.1), None)),
            }
        }
        "url" if args.len() == 1 => {
            let s = sized(&args[0]);
            Some((s.factor(0.1), Some(s)))
        }
        "lowerAscii" | "upperAscii" | "substring" | "trim" => {
            let s = sized(target?);
            Some((s.factor(0.1), Some(s)))
        }
        "replace" if args.len() >= 2 => {
            let s = sized(target?);
            let size = replaced(s, sized(&args[0]), sized(&args[1]));
            Some((s.factor(0.2), Some(size)))
        }
        "split" => {
            let s = sized(target?);
            let max = args
                .get(1)
                .map_or(s.max, |n| match n.expr.map(|e| &e.expr) {
                    Some(Expr::Literal(LiteralValue::Int(i))) => *i.inner() as u64,
                    _ => s.max,
                });
            Some((s.factor(0.2), Some(Est { min: 0, max })))
        }
        "join" => {
            let t = target?;
            let list = sized(t);
            let mut size = element(t).map_or(Est::fixed(0), |elem| list.mul(sized(&elem)));
            if let Some(sep) = first() {
                let separators = Est {
                    min: list.min.saturating_sub(1),
                    max: list.max.saturating_sub(1),
                };
                size = size.add(sized(sep).mul(separators));
            }
            Some((size.factor(0.1), Some(size)))
        }
        "find" | "findAll" => {
            let s = sized(target?);
            let text = s.add(Est::fixed(1)).factor(0.1);
            let pattern = sized(first()?).factor(0.25);
            Some((text.mul(pattern), Some(Est { min: 0, max: s.max })))
        }
        "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver" => {
            Some((sized(first()?).factor(0.1), None))
        }
        "ip" if id == "cidr_ip" => unit(),
        "ip" => Some((sized(first()?).factor(0.1), None)),
        "ip.isCanonical" => Some((sized(first()?).factor(0.2), None)),
        "masked"
        | "prefixLength"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast"
        | "format.named"
        | "sign"
        | "asInteger"
        | "isInteger"
        | "asApproximateFloat"
        | "isGreaterThan"
        | "isLessThan"
        | "compareTo"
        | "add"
        | "sub"
        | "major"
        | "minor"
        | "patch"
        | "getScheme"
        | "getHostname"
        | "getHost"
        | "getPort"
        | "getEscapedPath"
        | "getQuery" => unit(),
        "containsIP" | "containsCIDR" => {
            let other = first()?;
            let ip = Est { min: 4, max: 16 };
            let mut cost = ip.add(ip).factor(0.1);
            if function == "containsCIDR" {
                cost = cost.add(ip.factor(0.1)).add(Est::fixed(1));
            }
            if id == "cidr_contains_ip_string" || id == "cidr_contains_cidr_string" {
                cost = cost.add(sized(other).factor(0.1));
            }
            Some((cost, None))
        }
        "validate" => Some((sized(first()?).factor(0.1).factor(128.0 * 0.25), None)),
        "_==_" if args.len() == 2 && args[0].ty.is_exact(&args[1].ty) => match &args[0].ty {
            Ty::Opaque(name, _) => match name.as_str() {
                "net.IP" | "net.CIDR" | "kubernetes.Quantity" | "kubernetes.Semver" => unit(),
                "kubernetes.NamedFormat" => Some((Est { min: 1, max: 64 }.factor(0.1), None)),
                "kubernetes.URL" => {
                    let size = args[1].size.map_or(Est::fixed(1), |s| s.union(s));
                    Some((
                        Est {
                            min: 1,
                            max: size.max,
                        }
                        .factor(0.1),
                        None,
                    ))
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}
