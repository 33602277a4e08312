//! Type assignability and type-parameter substitution, as cel-go's checker
//! computes them (`checker/types.go`, `checker/mapping.go`).

use std::collections::BTreeMap;

use super::types::Ty;

/// The type parameters bound so far, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Mapping(BTreeMap<String, Ty>);

impl Mapping {
    fn find(&self, t: &Ty) -> Option<&Ty> {
        match t {
            Ty::Param(name) => self.0.get(name),
            _ => None,
        }
    }

    /// Binds the type parameter `name` to `t`.
    pub fn bind(&mut self, name: &str, t: Ty) {
        self.0.insert(name.to_string(), t);
    }

    fn add(&mut self, from: &Ty, to: Ty) {
        if let Ty::Param(name) = from {
            self.0.insert(name.clone(), to);
        }
    }

    /// cel-go's `isAssignable(t1, t2)`: whether the two types agree,
    /// binding type parameters on success; on failure nothing changes.
    /// Called as cel-go calls it: the expected type first when asserting a
    /// type, the argument types first when resolving an overload.
    pub fn assign(&mut self, to: &Ty, from: &Ty) -> bool {
        let mut copy = self.clone();
        if assignable(&mut copy, to, from) {
            *self = copy;
            true
        } else {
            false
        }
    }

    /// Like [`Mapping::assign`], for lists of types of the same length.
    pub fn assign_all(&mut self, to: &[Ty], from: &[Ty]) -> bool {
        let mut copy = self.clone();
        if assignable_list(&mut copy, to, from) {
            *self = copy;
            true
        } else {
            false
        }
    }

    /// `t` with the bound parameters replaced; unbound ones become `dyn`
    /// when `to_dyn`.
    pub fn substitute(&self, t: &Ty, to_dyn: bool) -> Ty {
        if let Some(sub) = self.find(t) {
            return self.substitute(&sub.clone(), to_dyn);
        }
        match t {
            Ty::Param(_) if to_dyn => Ty::Dyn,
            Ty::Opaque(name, params) => Ty::Opaque(
                name.clone(),
                params.iter().map(|p| self.substitute(p, to_dyn)).collect(),
            ),
            Ty::List(e) => Ty::list(self.substitute(e, to_dyn)),
            Ty::Map(k, v) => Ty::map(self.substitute(k, to_dyn), self.substitute(v, to_dyn)),
            Ty::Type(Some(p)) => Ty::Type(Some(Box::new(self.substitute(p, to_dyn)))),
            other => other.clone(),
        }
    }
}

fn is_equal_or_less_specific(t1: &Ty, t2: &Ty) -> bool {
    if matches!(t1, Ty::Dyn | Ty::Param(_)) {
        return true;
    }
    if matches!(t2, Ty::Dyn | Ty::Param(_)) {
        return false;
    }
    if t1.kind() != t2.kind() {
        return false;
    }
    match (t1, t2) {
        (Ty::Opaque(n1, p1), Ty::Opaque(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1
                    .iter()
                    .zip(p2)
                    .all(|(a, b)| is_equal_or_less_specific(a, b))
        }
        (Ty::List(a), Ty::List(b)) => is_equal_or_less_specific(a, b),
        (Ty::Map(k1, v1), Ty::Map(k2, v2)) => {
            is_equal_or_less_specific(k1, k2) && is_equal_or_less_specific(v1, v2)
        }
        (Ty::Type(_), Ty::Type(_)) => true,
        _ => t1.is_exact(t2),
    }
}

/// The more general of two assignable types (`mostGeneral`).
pub(crate) fn most_general(t1: &Ty, t2: &Ty) -> Ty {
    if is_equal_or_less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

/// Whether a `from` value may stand where a `to` is expected, with the
/// parameters bound in `m` (`internalIsAssignable`).
fn assignable(m: &mut Mapping, to: &Ty, from: &Ty) -> bool {
    if matches!(from, Ty::Param(_)) {
        let (valid, has_sub) = valid_substitution(m, to, from);
        if valid {
            return true;
        }
        if has_sub {
            return false;
        }
    }
    if matches!(to, Ty::Param(_)) {
        return valid_substitution(m, from, to).0;
    }
    if to.is_dyn_or_error() || from.is_dyn_or_error() {
        return true;
    }
    if matches!(to, Ty::Null) {
        return nullable(from);
    }
    if matches!(from, Ty::Null) {
        return nullable(to);
    }
    match to {
        Ty::Opaque(..) | Ty::List(_) | Ty::Map(..) => {
            to.kind() == from.kind()
                && to.type_name() == from.type_name()
                && assignable_refs(m, &to.params(), &from.params())
        }
        Ty::Type(_) => matches!(from, Ty::Type(_)),
        Ty::Object(_) => from.kind() == to.kind() && from.type_name() == to.type_name(),
        _ => to.is_exact(from),
    }
}

/// Types a `null` may stand for (`isLegacyNullable`).
fn nullable(t: &Ty) -> bool {
    matches!(
        t,
        Ty::Opaque(..) | Ty::Object(_) | Ty::Duration | Ty::Timestamp | Ty::Null
    )
}

fn valid_substitution(m: &mut Mapping, t1: &Ty, t2: &Ty) -> (bool, bool) {
    if t1.kind() == t2.kind() && t1.is_exact(t2) {
        return (true, true);
    }
    if let Some(sub) = m.find(t2).cloned() {
        if t1.kind() == sub.kind() && t1.is_exact(&sub) {
            return (true, true);
        }
        if assignable(m, t1, &sub) {
            let general = most_general(t1, &sub);
            if not_referenced_in(m, t2, &general) {
                m.add(t2, general);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, t2, t1) {
        m.add(t2, t1.clone());
        return (true, false);
    }
    (false, false)
}

fn not_referenced_in(m: &Mapping, t: &Ty, within: &Ty) -> bool {
    if t.is_exact(within) {
        return false;
    }
    match within {
        Ty::Param(_) => match m.find(within) {
            None => true,
            Some(sub) => not_referenced_in(m, t, sub),
        },
        Ty::Opaque(..) | Ty::List(_) | Ty::Map(..) | Ty::Type(_) => {
            within.params().iter().all(|p| not_referenced_in(m, t, p))
        }
        _ => true,
    }
}

fn assignable_list(m: &mut Mapping, to: &[Ty], from: &[Ty]) -> bool {
    to.len() == from.len() && to.iter().zip(from).all(|(t, f)| assignable(m, t, f))
}

fn assignable_refs(m: &mut Mapping, to: &[&Ty], from: &[&Ty]) -> bool {
    to.len() == from.len() && to.iter().zip(from).all(|(t, f)| assignable(m, t, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_bind_to_the_first_type_and_must_then_agree() {
        let a = Ty::Param("A".into());
        let mut m = Mapping::default();
        assert!(m.assign_all(&[a.clone(), a.clone()], &[Ty::Int, Ty::Int]));
        let mut m = Mapping::default();
        assert!(!m.assign_all(&[a.clone(), a.clone()], &[Ty::Int, Ty::Double]));
        let mut m = Mapping::default();
        assert!(m.assign_all(
            &[a.clone(), Ty::list(a.clone())],
            &[Ty::String, Ty::list(Ty::String)]
        ));
        assert_eq!(m.substitute(&a, false).to_string(), "string");
        let mut m = Mapping::default();
        assert!(
            m.assign_all(&[a.clone(), a], &[Ty::Dyn, Ty::String]),
            "dyn matches anything"
        );
    }

    #[test]
    fn null_stands_only_for_objects_and_opaque_types() {
        let a = Ty::Param("A".into());
        let mut m = Mapping::default();
        assert!(!m.assign_all(&[a.clone(), a.clone()], &[Ty::String, Ty::Null]));
        let mut m = Mapping::default();
        let url = Ty::Opaque("kubernetes.URL".into(), Vec::new());
        assert!(m.assign_all(&[a.clone(), a], &[url, Ty::Null]));
    }
}
