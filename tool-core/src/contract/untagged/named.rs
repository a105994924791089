//! Finding the value a union reads (a node already held, or the value, now held), and
//! naming held values by their JSON.

use super::*;

/// What a union found where it was asked to read: a node of a value already held, or the
/// value, now held.
pub(super) enum Entered {
    Held { arena: u64, node: usize },
    Fresh(Arena),
}

/// Asks for a held node's identity; any other deserializer hands over the value itself.
pub(super) struct Enter {
    pub(super) depth: u32,
}

impl Enter {
    fn fresh<E>(self, read: impl FnOnce(Build<'_>) -> Result<usize, E>) -> Result<Entered, E> {
        let mut builder = Builder::default();
        let root = read(Build {
            builder: &mut builder,
            depth: self.depth,
        })?;
        Ok(Entered::Fresh(builder.finish(root)))
    }
}

impl<'de> Visitor<'de> for Enter {
    type Value = Entered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Entered, E> {
        // Only a held node answers with bytes: JSON has none.
        match <[u8; 16]>::try_from(v) {
            Ok(identity) => {
                let (arena, node) = identity.split_at(8);
                let arena = u64::from_le_bytes(arena.try_into().unwrap_or_default());
                let node = u64::from_le_bytes(node.try_into().unwrap_or_default());
                let node = usize::try_from(node).map_err(E::custom)?;
                Ok(Entered::Held { arena, node })
            }
            Err(_) => Err(E::custom("bytes where a JSON value was expected")),
        }
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<Entered, D::Error> {
        self.fresh(|build| build.deserialize(de))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Entered, E> {
        self.fresh(|build| build.visit_bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Entered, E> {
        self.fresh(|build| build.visit_i64(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Entered, E> {
        self.fresh(|build| build.visit_u64(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Entered, E> {
        self.fresh(|build| build.visit_f64(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Entered, E> {
        self.fresh(|build| build.visit_str(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Entered, E> {
        self.fresh(|build| build.visit_string(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Entered, E> {
        self.fresh(|build| build.visit_unit())
    }

    fn visit_none<E: de::Error>(self) -> Result<Entered, E> {
        self.fresh(|build| build.visit_none())
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<Entered, D::Error> {
        self.fresh(|build| build.deserialize(de))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Entered, A::Error> {
        self.fresh(|build| build.visit_seq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Entered, A::Error> {
        self.fresh(|build| build.visit_map(map))
    }
}

/// Names held values by their JSON value as JSON Schema compares them (numbers by value,
/// objects in any order): two nodes get the same [`ValueId`] exactly when they are equal. A
/// node is named once, from the names of its parts, so naming every item of sets nested in
/// sets costs time linear in the value.
#[derive(Default)]
pub(crate) struct Interner {
    ids: HashMap<Shape, ValueId>,
    /// (arena, node) → its name.
    named: HashMap<(u64, usize), ValueId>,
}

/// The name of a JSON value, from [`Interner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ValueId(usize);

#[derive(PartialEq, Eq, Hash)]
enum Shape {
    Null,
    Bool(bool),
    /// Every integer, however written (`1`, `1.0`, `1e0`).
    Int(i128),
    /// Any other number, by its bits.
    Float(u64),
    Str(Box<str>),
    Array(Vec<ValueId>),
    /// Sorted by key.
    Object(Vec<(Box<str>, ValueId)>),
}

impl Interner {
    fn name(&mut self, arena: &Arena, node: usize) -> ValueId {
        if let Some(&id) = self.named.get(&(arena.id, node)) {
            return id;
        }
        work();
        let shape = match &arena.nodes[node] {
            Node::Null => Shape::Null,
            Node::Bool(b) => Shape::Bool(*b),
            Node::U(u) => Shape::Int(i128::from(*u)),
            Node::I(i) => Shape::Int(i128::from(*i)),
            #[allow(clippy::cast_possible_truncation)]
            Node::F(f) if f.fract() == 0.0 && f.abs() < 1e38 => Shape::Int(*f as i128),
            Node::F(f) => Shape::Float(f.to_bits()),
            // Compared as a validator holds it: as the nearest double.
            Node::Wide(wide) => match wide.nearest() {
                #[allow(clippy::cast_possible_truncation)]
                f if f.abs() < 1e38 => Shape::Int(f as i128),
                f => Shape::Float(f.to_bits()),
            },
            Node::Str(span) => Shape::Str(arena.str(*span).into()),
            Node::Array(start, len) => Shape::Array(
                arena.items[*start..*start + *len]
                    .iter()
                    .map(|&item| self.name(arena, item))
                    .collect(),
            ),
            Node::Object(start, len) => {
                let mut members: Vec<(Box<str>, ValueId)> = arena.members[*start..*start + *len]
                    .iter()
                    .map(|(key, member)| (arena.str(*key).into(), self.name(arena, *member)))
                    .collect();
                members.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                Shape::Object(members)
            }
        };
        let next = ValueId(self.ids.len());
        let id = *self.ids.entry(shape).or_insert(next);
        self.named.insert((arena.id, node), id);
        id
    }
}

/// Reads one value held once (or found already held, inside a held value) with `read`, and
/// names it by its JSON value. Outside a held value, `values` names it, so that the values
/// read with one `values` can be compared.
pub(crate) fn read_named<'de, D: Deserializer<'de>, R>(
    de: D,
    cx: &mut Cx,
    at: &Path<'_>,
    values: &Rc<RefCell<Interner>>,
    read: impl for<'a> FnOnce(HeldValue<'a>, &mut Cx) -> Result<R, serde_json::Error>,
) -> Result<(R, ValueId), D::Error> {
    match de.deserialize_newtype_struct(HELD_NODE, Enter { depth: at.depth() })? {
        Entered::Held { arena, node } => {
            let scope = cx
                .untagged
                .scope
                .clone()
                .filter(|scope| scope.arena.id == arena && node < scope.arena.nodes.len())
                .ok_or_else(|| de::Error::custom("a held value read outside its union"))?;
            let id = scope.values().borrow_mut().name(&scope.arena, node);
            let held = HeldValue(Held {
                arena: &scope.arena,
                node,
            });
            let read = read(held, cx).map_err(de::Error::custom)?;
            Ok((read, id))
        }
        Entered::Fresh(arena) => {
            let root = arena.root;
            let scope = Scope::with_values(arena, cx, Some(values));
            let id = scope.values().borrow_mut().name(&scope.arena, root);
            let outer = cx.untagged.scope.replace(Rc::clone(&scope));
            let held = HeldValue(Held {
                arena: &scope.arena,
                node: root,
            });
            let read = read(held, cx);
            cx.untagged.scope = outer;
            Ok((read.map_err(de::Error::custom)?, id))
        }
    }
}
