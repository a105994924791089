//! The members of a tagged union's object held until its tag comes, and held values read
//! back.

use super::*;

/// The members of a tagged union's object seen before its tag, held as nodes (not copied again
/// by the unions inside them), and the tag's value once it comes.
pub(crate) struct HeldMembers {
    /// The members are in its `held` as they come.
    builder: Builder,
    tag: Option<usize>,
}

impl HeldMembers {
    /// Members to hold, in the buffers of the last value `cx` read back.
    pub(crate) fn new(cx: &mut Cx) -> Self {
        HeldMembers {
            builder: cx.untagged.builder(),
            tag: None,
        }
    }

    /// Holds the next value of `map` as the member `key` (`depth` containers enclose it).
    pub(crate) fn hold<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        depth: u32,
    ) -> Result<(), A::Error> {
        let key = self.builder.string(key);
        let node = map.next_value_seed(Build {
            builder: &mut self.builder,
            depth,
        })?;
        self.builder.held.push((key, node));
        Ok(())
    }

    /// Holds the next value of `map` as the tag's.
    pub(crate) fn hold_tag<'de, A: MapAccess<'de>>(
        &mut self,
        map: &mut A,
        depth: u32,
    ) -> Result<(), A::Error> {
        let node = map.next_value_seed(Build {
            builder: &mut self.builder,
            depth,
        })?;
        self.tag = Some(node);
        Ok(())
    }

    /// Whether the tag came.
    pub(crate) fn has_tag(&self) -> bool {
        self.tag.is_some()
    }

    /// Reads the members back: `read` is handed the tag's value (if it came) and the members
    /// in their order, the tag's left out, with `cx` knowing the held value.
    pub(crate) fn read<R>(
        self,
        cx: &mut Cx,
        read: impl for<'a> FnOnce(Option<HeldValue<'a>>, HeldObject<'a>, &mut Cx) -> R,
    ) -> R {
        let HeldMembers { mut builder, tag } = self;
        let start = builder.members.len();
        let len = builder.held.len();
        let Builder { members, held, .. } = &mut builder;
        members.append(held);
        let root = builder.push(Node::Object(start, len));
        let scope = Scope::new(builder.finish(root), cx);
        let outer = cx.untagged.scope.replace(Rc::clone(&scope));
        let arena = &scope.arena;
        let object = HeldObject(HeldMap::new(
            arena,
            &arena.members[start..start + len],
            None,
        ));
        let read = read(tag.map(|node| HeldValue(Held { arena, node })), object, cx);
        cx.untagged.scope = outer;
        cx.untagged.recycle(scope);
        read
    }

    /// Holds the next value of `map` alone (`depth` containers enclose it), to read later.
    pub(crate) fn hold_one<'de, A: MapAccess<'de>>(
        map: &mut A,
        depth: u32,
    ) -> Result<HeldOne, A::Error> {
        let mut builder = Builder::default();
        let root = map.next_value_seed(Build {
            builder: &mut builder,
            depth,
        })?;
        Ok(HeldOne(builder.finish(root)))
    }
}

/// One value held by [`HeldMembers::hold_one`].
pub(crate) struct HeldOne(Arena);

impl HeldOne {
    /// Reads the value back with `read`, with `cx` knowing the held value.
    pub(crate) fn read<R>(
        self,
        cx: &mut Cx,
        read: impl for<'a> FnOnce(HeldValue<'a>, &mut Cx) -> R,
    ) -> R {
        let root = self.0.root;
        let scope = Scope::new(self.0, cx);
        let outer = cx.untagged.scope.replace(Rc::clone(&scope));
        let read = read(
            HeldValue(Held {
                arena: &scope.arena,
                node: root,
            }),
            cx,
        );
        cx.untagged.scope = outer;
        cx.untagged.recycle(scope);
        read
    }
}

/// A value held by [`HeldMembers`], to deserialize.
pub(crate) struct HeldValue<'a>(pub(super) Held<'a>);

impl<'a> HeldValue<'a> {
    /// The deserializer of the value.
    pub(crate) fn de(self) -> impl Deserializer<'a, Error = serde_json::Error> {
        self.0
    }
}

/// The members held by [`HeldMembers`], to read as a map.
pub(crate) struct HeldObject<'a>(HeldMap<'a>);

impl<'a> HeldObject<'a> {
    /// The members as a map.
    pub(crate) fn map(self) -> impl MapAccess<'a, Error = serde_json::Error> {
        self.0
    }
}

impl Scope {
    /// A scope for `arena`, sharing what is known of copies with the scope `cx` is in.
    pub(super) fn new(arena: Arena, cx: &Cx) -> Rc<Scope> {
        Scope::with_values(arena, cx, None)
    }

    /// A scope for `arena` naming JSON values with `values` unless the scope `cx` is in has
    /// its own.
    pub(super) fn with_values(
        arena: Arena,
        cx: &Cx,
        values: Option<&Rc<RefCell<Interner>>>,
    ) -> Rc<Scope> {
        let outer = cx.untagged.scope.as_ref();
        // Most held values hold no union and no set: what they would share is made only when
        // asked for.
        let copies = OnceCell::new();
        if let Some(outer) = outer {
            let _ = copies.set(Rc::clone(outer.copies()));
        }
        let shared = OnceCell::new();
        if let Some(values) = outer.map(|outer| outer.values()).or(values) {
            let _ = shared.set(Rc::clone(values));
        }
        Rc::new(Scope {
            arena,
            memo: RefCell::new(HashMap::new()),
            copies,
            copied: outer.is_some(),
            values: shared,
        })
    }

    /// The verdicts by place shared by every scope of one check.
    pub(super) fn copies(&self) -> &Rc<RefCell<Copies>> {
        self.copies.get_or_init(Rc::default)
    }

    /// The names of JSON values shared by every scope of one check.
    pub(super) fn values(&self) -> &Rc<RefCell<Interner>> {
        self.values.get_or_init(Rc::default)
    }

    /// Remembers the verdict on the union `E` at `node` (at `at`), numbers read as serde reads
    /// them or not; by its place too, when the value is a copy.
    pub(super) fn record<E: Union>(
        &self,
        node: usize,
        at: &Path<'_>,
        serde_numbers: bool,
        verdict: &Verdict,
    ) {
        let ty = TypeId::of::<E>();
        self.memo
            .borrow_mut()
            .insert((node, ty, serde_numbers), verdict.clone());
        if self.copied {
            let copies = &mut *self.copies().borrow_mut();
            let place = at.place(&mut copies.places);
            copies
                .verdicts
                .insert((place, ty, serde_numbers), verdict.clone());
        }
    }
}
