//! `Path`: a JSON Pointer as a linked list of segments on the stack, rendered only when a
//! finding needs it.

use crate::validate::parse::push_escaped;

#[derive(Debug, Clone, Copy)]
pub(super) enum Seg<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

/// A JSON Pointer as a linked list of segments on the stack.
#[derive(Debug, Clone, Copy)]
pub(super) struct Path<'a> {
    pub(super) parent: Option<&'a Path<'a>>,
    pub(super) seg: Seg<'a>,
}

impl<'a> Path<'a> {
    pub(super) fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path { parent: Some(self), seg: Seg::Key(key) }
    }

    pub(super) fn index(&self, index: usize) -> Path<'_> {
        Path { parent: Some(self), seg: Seg::Index(index) }
    }

    pub(super) fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut at = Some(self);
        while let Some(path) = at {
            segs.push(path.seg);
            at = path.parent;
        }
        let mut pointer = String::new();
        for seg in segs.iter().rev() {
            match seg {
                Seg::Root => {}
                Seg::Key(key) => {
                    pointer.push('/');
                    push_escaped(&mut pointer, key);
                }
                Seg::Index(index) => {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                }
            }
        }
        pointer
    }
}
