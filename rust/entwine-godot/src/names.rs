//! StringNames the glue hands the engine every frame, made once. A `&str` argument becomes a new
//! StringName on every call (a UTF-8 decode and a look-up in the engine's table of names).

use std::cell::RefCell;

use godot::prelude::*;

thread_local! {
    static PAIR_DRIVEN: RefCell<Option<StringName>> = const { RefCell::new(None) };
}

/// Calls `f` with the name of the metadata a [`crate::HoldHandComponent`] sets on a character
/// whose root the pair drives (`entwine_pair_driven`).
pub(crate) fn with_pair_driven<R>(f: impl FnOnce(&StringName) -> R) -> R {
    PAIR_DRIVEN.with(|cell| match cell.try_borrow_mut() {
        Ok(mut name) => f(name.get_or_insert_with(|| StringName::from(PAIR_DRIVEN_NAME))),
        Err(_) => f(&StringName::from(PAIR_DRIVEN_NAME)),
    })
}

const PAIR_DRIVEN_NAME: &str = "entwine_pair_driven";

/// Drops the names kept on this thread (the library is being unloaded).
pub(crate) fn release() {
    PAIR_DRIVEN.with(|cell| {
        if let Ok(mut name) = cell.try_borrow_mut() {
            *name = None;
        }
    });
}
