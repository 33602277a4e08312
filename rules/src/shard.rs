//! Shards of the 64-bit hash space: which objects of a sharded module a
//! replica owns. An object's point is the 64-bit FNV-1a hash of its uid
//! (or namespace), as Kubernetes' `shardRange()` hashes it (KEP-5866); a
//! replica owns the points of its [`ShardRanges`], each `[start, end)`.

use std::fmt;

/// 2^64, the end of the hash space.
const END: u128 = 1 << 64;

/// The point of `value` (an object's uid or namespace) in the hash space:
/// its 64-bit FNV-1a hash.
pub fn shard_point(value: &str) -> u64 {
    fnv1a64(value.bytes())
}

/// The 64-bit FNV-1a hash of `bytes` (Go's `hash/fnv` `New64a`): what a
/// shard selector hashes an object's uid or namespace with, and the
/// stable hash of rekon's own choices (which objects a canary serves,
/// which modules a replica prefers).
pub fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// How many slots the hash space is cut into when replicas share it: 60
/// divides evenly among 1, 2, 3, 4, 5 or 6 replicas.
pub const SHARD_SLOTS: usize = 60;

/// A set of ranges of the hash space, kept sorted, disjoint and merged.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShardRanges(Vec<(u64, u128)>);

impl ShardRanges {
    /// No point.
    pub fn none() -> ShardRanges {
        ShardRanges(Vec::new())
    }

    /// Every point.
    pub fn all() -> ShardRanges {
        ShardRanges(vec![(0, END)])
    }

    /// The `index`th of `count` equal parts of the hash space (the last
    /// ends at 2^64); none when `index` is not below `count`.
    pub fn part(index: usize, count: usize) -> ShardRanges {
        if index >= count {
            return ShardRanges::none();
        }
        let bound = |i: usize| END * i as u128 / count as u128;
        ShardRanges::from_pairs([(bound(index) as u64, bound(index + 1))])
    }

    /// What `member` owns when `members` share the space: of the
    /// [`SHARD_SLOTS`] equal slots, each goes to the member that wants it
    /// most (rendezvous hashing of member and slot) among those with room
    /// left, every member taking at most its share (`ceil(slots /
    /// members)`); slots are placed in order. Every member computes the
    /// same answer from the same members; when one leaves, its slots are
    /// spread over the others and almost no other slot moves.
    pub fn assigned<S: AsRef<str>>(members: &[S], member: &str) -> ShardRanges {
        if members.is_empty() {
            return ShardRanges::none();
        }
        let share = SHARD_SLOTS.div_ceil(members.len());
        let mut taken = vec![0usize; members.len()];
        let mut mine = Vec::new();
        for slot in 0..SHARD_SLOTS {
            let winner = (0..members.len())
                .filter(|m| taken[*m] < share)
                .max_by_key(|m| {
                    (
                        slot_score(members[*m].as_ref(), slot),
                        std::cmp::Reverse(*m),
                    )
                })
                .expect("room for every slot");
            taken[winner] += 1;
            if members[winner].as_ref() == member {
                let bound = |i: usize| END * i as u128 / SHARD_SLOTS as u128;
                mine.push((bound(slot) as u64, bound(slot + 1)));
            }
        }
        ShardRanges::from_pairs(mine)
    }

    fn from_pairs(pairs: impl IntoIterator<Item = (u64, u128)>) -> ShardRanges {
        let mut pairs: Vec<(u64, u128)> = pairs
            .into_iter()
            .filter(|(start, end)| u128::from(*start) < *end)
            .collect();
        pairs.sort();
        let mut merged: Vec<(u64, u128)> = Vec::with_capacity(pairs.len());
        for (start, end) in pairs {
            match merged.last_mut() {
                Some(last) if u128::from(start) <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        ShardRanges(merged)
    }

    /// Whether the set holds no point.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `point` is in one of the ranges.
    pub fn contains(&self, point: u64) -> bool {
        let point = u128::from(point);
        self.0
            .iter()
            .any(|(start, end)| u128::from(*start) <= point && point < *end)
    }

    /// The points of either set.
    pub fn union(&self, other: &ShardRanges) -> ShardRanges {
        ShardRanges::from_pairs(self.0.iter().chain(&other.0).copied())
    }

    /// The points of both sets.
    pub fn intersection(&self, other: &ShardRanges) -> ShardRanges {
        let mut out = Vec::new();
        for (a_start, a_end) in &self.0 {
            for (b_start, b_end) in &other.0 {
                let start = (*a_start).max(*b_start);
                let end = (*a_end).min(*b_end);
                if u128::from(start) < end {
                    out.push((start, end));
                }
            }
        }
        ShardRanges::from_pairs(out)
    }

    /// The points of this set that are not in `other`.
    pub fn minus(&self, other: &ShardRanges) -> ShardRanges {
        let mut out = Vec::new();
        for (start, end) in &self.0 {
            let mut from = u128::from(*start);
            for (b_start, b_end) in &other.0 {
                let (b_start, b_end) = (u128::from(*b_start), *b_end);
                if b_end <= from || b_start >= *end {
                    continue;
                }
                if b_start > from {
                    out.push((from as u64, b_start));
                }
                from = from.max(b_end);
            }
            if from < *end {
                out.push((from as u64, *end));
            }
        }
        ShardRanges::from_pairs(out)
    }

    /// Whether the two sets share a point.
    pub fn overlaps(&self, other: &ShardRanges) -> bool {
        !self.intersection(other).is_empty()
    }

    /// The share of the hash space the set holds, from 0 to 1.
    pub fn fraction(&self) -> f64 {
        let points: u128 = self.0.iter().map(|(s, e)| e - u128::from(*s)).sum();
        points as f64 / END as f64
    }

    /// The set as a `shardSelector` of `field` (`object.metadata.uid` or
    /// `object.metadata.namespace`): `shardRange()` calls joined by `||`;
    /// none for an empty set.
    pub fn selector(&self, field: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        Some(
            self.0
                .iter()
                .map(|(start, end)| {
                    format!(
                        "shardRange({field}, '{}', '{}')",
                        hex(*start),
                        hex_end(*end)
                    )
                })
                .collect::<Vec<_>>()
                .join(" || "),
        )
    }

    /// Reads the form [`Display`](fmt::Display) writes (`0x…-0x…` joined
    /// by `,`; empty for no point).
    pub fn parse(text: &str) -> Option<ShardRanges> {
        let text = text.trim();
        if text.is_empty() {
            return Some(ShardRanges::none());
        }
        let mut pairs = Vec::new();
        for range in text.split(',') {
            let (start, end) = range.trim().split_once('-')?;
            let start = u64::from_str_radix(start.trim().strip_prefix("0x")?, 16).ok()?;
            let end = u128::from_str_radix(end.trim().strip_prefix("0x")?, 16).ok()?;
            if end > END {
                return None;
            }
            pairs.push((start, end));
        }
        Some(ShardRanges::from_pairs(pairs))
    }
}

/// How much `member` wants `slot` (FNV-1a with a final mix).
fn slot_score(member: &str, slot: usize) -> u64 {
    let mut hash = fnv1a64(member.bytes().chain([0]).chain((slot as u64).to_le_bytes()));
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^ (hash >> 33)
}

fn hex(value: u64) -> String {
    format!("0x{value:016x}")
}

fn hex_end(value: u128) -> String {
    if value == END {
        "0x10000000000000000".to_string()
    } else {
        hex(value as u64)
    }
}

impl fmt::Display for ShardRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranges: Vec<String> = self
            .0
            .iter()
            .map(|(start, end)| format!("{}-{}", hex(*start), hex_end(*end)))
            .collect();
        f.write_str(&ranges.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_parts_cover_the_space_once() {
        for count in 1..=7 {
            let parts: Vec<ShardRanges> = (0..count).map(|i| ShardRanges::part(i, count)).collect();
            let mut all = ShardRanges::none();
            for (i, part) in parts.iter().enumerate() {
                assert!((part.fraction() - 1.0 / count as f64).abs() < 1e-9);
                for other in &parts[i + 1..] {
                    assert!(!part.overlaps(other), "{part} and {other}");
                }
                all = all.union(part);
            }
            assert_eq!(all, ShardRanges::all(), "{count} parts");
        }
        assert!(ShardRanges::part(3, 3).is_empty());
        assert!(ShardRanges::all().contains(u64::MAX) && ShardRanges::all().contains(0));
    }

    #[test]
    fn assigned_slots_are_balanced_and_move_little() {
        let members = ["replica-a", "replica-b", "replica-c"];
        let parts: Vec<ShardRanges> = members
            .iter()
            .map(|m| ShardRanges::assigned(&members, m))
            .collect();
        let mut all = ShardRanges::none();
        for (i, part) in parts.iter().enumerate() {
            assert!((part.fraction() - 1.0 / 3.0).abs() < 1e-9, "{part}");
            assert!(parts[i + 1..].iter().all(|p| !p.overlaps(part)));
            all = all.union(part);
        }
        assert_eq!(all, ShardRanges::all());
        // One leaves: the others keep (nearly) all they had and split its
        // slots between them.
        let two = &members[..2];
        let mut moved = 0.0;
        for (i, m) in two.iter().enumerate() {
            let now = ShardRanges::assigned(two, m);
            assert!((now.fraction() - 0.5).abs() < 1e-9);
            moved += parts[i].minus(&now).fraction();
            assert!(
                now.minus(&parts[i]).intersection(&parts[2]).fraction() > 0.1,
                "{m} takes a good part of the slots of the one that left"
            );
        }
        assert!(
            moved <= 3.0 / SHARD_SLOTS as f64,
            "{moved} of the space moved between the two that stayed"
        );
        assert_eq!(ShardRanges::assigned(&["only"], "only"), ShardRanges::all());
        assert!(ShardRanges::assigned(&members, "stranger").is_empty());
    }

    #[test]
    fn set_arithmetic_and_text() {
        let half = ShardRanges::part(0, 2);
        let third = ShardRanges::part(1, 3);
        let lost = half.minus(&ShardRanges::part(0, 3));
        assert_eq!(lost, half.intersection(&third));
        assert_eq!(lost.union(&ShardRanges::part(0, 3)), half);
        assert_eq!(
            ShardRanges::all().minus(&ShardRanges::all()),
            ShardRanges::none()
        );
        let split = ShardRanges::all().minus(&third);
        assert_eq!(
            split.to_string(),
            "0x0000000000000000-0x5555555555555555,0xaaaaaaaaaaaaaaaa-0x10000000000000000"
        );
        assert_eq!(ShardRanges::parse(&split.to_string()), Some(split.clone()));
        assert_eq!(ShardRanges::parse(""), Some(ShardRanges::none()));
        assert_eq!(ShardRanges::parse("0x1-0x20000000000000000"), None);
        assert_eq!(ShardRanges::parse("junk"), None);
        assert_eq!(
            split.selector("object.metadata.uid").as_deref(),
            Some(
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x5555555555555555') || shardRange(object.metadata.uid, '0xaaaaaaaaaaaaaaaa', '0x10000000000000000')"
            )
        );
        assert!(split.contains(0) && !split.contains(0x6000_0000_0000_0000));
        assert_eq!(ShardRanges::none().selector("object.metadata.uid"), None);
    }

    #[test]
    fn points_are_kubernetes_fnv1a() {
        // FNV-1a 64 of "" is its offset basis; of "a", Go's hash/fnv value.
        assert_eq!(shard_point(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(shard_point("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
