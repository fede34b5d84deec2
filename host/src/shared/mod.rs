//! What the hosts on one shared store hold in common (see
//! [`SharedState`](crate::store::SharedState)), read and written as
//! documents of the store: the workspace's grants ([`grants`]) and the
//! forged and installed skills ([`skills`]). The learned rules are shared
//! by `learn`. A host follows them ([`follow`]): a runner takes them in
//! before a run (`Runner::catch_up`, in `exec`).

pub mod follow;
pub mod grants;
pub mod skills;
